import type { AgentTool } from './agent-tool.js';
import { bashTool } from './bash-tool.js';
import { editTool } from './edit-tool.js';
import { globTool } from './glob-tool.js';
import { grepTool } from './grep-tool.js';
import { readTool } from './read-tool.js';
import { writeTool } from './write-tool.js';

/** The tools of the built-in runtime, with Claude Code's names and parameters. */
export const BUILTIN_TOOLS: readonly AgentTool[] = [readTool, writeTool, editTool, bashTool, globTool, grepTool];
