export { createFileGuard, type FileGuard } from './file-guard.js';
export { ToolError, isToolError } from './tool-error.js';
export { STRUCTURED_OUTPUT_TOOL, createStructuredOutput, type StructuredOutput, type StructuredParse } from './structured-output.js';
export { createToolLoopRuntime, type ToolLoopRuntimeOptions } from './tool-loop-runtime.js';
export {
  executeTool,
  formatZodIssues,
  toJsonSchema,
  toToolDefinition,
  type AgentTool,
  type ToolContext,
  type ToolExecution,
} from './tools/agent-tool.js';
export { BUILTIN_TOOLS } from './tools/builtin-tools.js';
export { readTool, type ReadInput } from './tools/read-tool.js';
export { writeTool, type WriteInput } from './tools/write-tool.js';
export { editTool, type EditInput } from './tools/edit-tool.js';
export { bashTool, BASH_OUTPUT_LIMIT, type BashInput } from './tools/bash-tool.js';
export { globTool, GLOB_RESULT_LIMIT, type GlobInput } from './tools/glob-tool.js';
export { grepTool, GREP_RESULT_LIMIT, type GrepInput } from './tools/grep-tool.js';
