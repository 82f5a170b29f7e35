/**
 * The agents' file tools in an iteration's workspace (seed 001, fileguard.py + approvals.py +
 * tools.py). Every path goes through the file guard: nothing outside the workspace, nothing in
 * `.git`, no symlink escapes, no `protected_paths`. A write inside `writable_paths` lands; any
 * other write the guard admits becomes a pending approval (with `enable_approvals`), written only
 * when the user approves it, through the same guard again.
 */
import { Buffer } from 'node:buffer';
import type { ToolCall } from '../../core/model.js';
import { createFileGuard, createWriteMatcher, type FileGuard } from '../../agent/file-guard.js';
import { executeTool, type AgentTool, type ToolContext } from '../../agent/tools/agent-tool.js';
import { globTool } from '../../agent/tools/glob-tool.js';
import { readTool } from '../../agent/tools/read-tool.js';
import { writeTool } from '../../agent/tools/write-tool.js';
import type { ProcessRunner } from '../../process/types.js';
import type { FileToolOutcome, TeamFileTools } from './context.js';
import type { FileOperation } from './events.js';
import type { Approval, FileAccess } from './types.js';

export interface TeamFileToolsOptions {
  workspace: string;
  access: FileAccess;
  /** Ids of new approvals (`a1`, `a2`, ...), unique in the iteration. */
  nextApprovalId: () => string;
  /** The phase recorded on approvals. */
  phase: string | null;
  runner: ProcessRunner;
  /**
   * Set: every write is refused with this text (an agent with no task to write in during the
   * implementation phase reads the iteration's workspace but changes nothing).
   */
  readOnly?: string;
}

/** A guard that admits every path inside the workspace except `.git` and the protected paths. */
function workspaceGuard(workspace: string, access: FileAccess): FileGuard {
  return createFileGuard(workspace, { read: ['**'], write: ['**'], denyWrite: access.protected_paths });
}

function toolContext(guard: FileGuard, runner: ProcessRunner, signal?: AbortSignal): ToolContext {
  return { guard, runner, bashTimeoutMs: 0, ...(signal === undefined ? {} : { signal }) };
}

function inputPath(input: unknown, key: string): string {
  if (typeof input === 'object' && input !== null && key in input) {
    const value: unknown = (input as Record<string, unknown>)[key];
    if (typeof value === 'string') return value;
  }
  return '';
}

export function createTeamFileTools(options: TeamFileToolsOptions): TeamFileTools {
  const guard = workspaceGuard(options.workspace, options.access);
  const writable = createWriteMatcher({
    read: [],
    write: options.access.writable_paths,
    denyWrite: options.access.protected_paths,
  });

  async function run(
    tool: AgentTool,
    call: ToolCall,
    operation: Omit<FileOperation, 'outcome'>,
    done: FileOperation['outcome'],
    signal?: AbortSignal,
  ): Promise<FileToolOutcome> {
    const result = await executeTool(tool, call.input, toolContext(guard, options.runner, signal));
    return {
      output: result.output,
      isError: result.isError,
      operation: {
        ...operation,
        outcome: result.isError ? 'refused' : done,
        ...(result.isError ? { detail: result.output } : {}),
      },
      approval: null,
    };
  }

  return {
    async execute(agentName, call, signal) {
      if (call.name === 'Read')
        return run(readTool, call, { tool: 'Read', path: inputPath(call.input, 'file_path') }, 'read', signal);
      if (call.name === 'Glob')
        return run(globTool, call, { tool: 'Glob', path: inputPath(call.input, 'pattern') }, 'listed', signal);
      const path = inputPath(call.input, 'file_path');
      const content =
        typeof call.input === 'object' && call.input !== null && 'content' in call.input
          ? call.input.content
          : undefined;
      const refused = (output: string, shown: string): FileToolOutcome => ({
        output,
        isError: true,
        operation: { tool: 'Write', path: shown, outcome: 'refused', detail: output },
        approval: null,
      });
      if (options.readOnly !== undefined) return refused(options.readOnly, path);
      if (typeof content !== 'string' || path === '')
        return run(writeTool, call, { tool: 'Write', path }, 'written', signal);
      if (Buffer.byteLength(content) > options.access.max_file_size_bytes)
        return refused(
          `The file is larger than the ${options.access.max_file_size_bytes} bytes a team agent may write at once.`,
          path,
        );
      let relative: string;
      try {
        relative = guard.relative(await guard.resolveWrite(path));
      } catch (error) {
        return refused(error instanceof Error ? error.message : String(error), path);
      }
      if (writable(relative)) return run(writeTool, call, { tool: 'Write', path: relative }, 'written', signal);
      if (!options.access.enable_approvals)
        return refused(
          `Writing '${relative}' is not allowed: writable paths are ${options.access.writable_paths.join(', ')}.`,
          relative,
        );
      const approval: Approval = {
        id: options.nextApprovalId(),
        agent: agentName,
        path: relative,
        content,
        status: 'pending',
        worktree: options.workspace,
        ...(options.phase === null ? {} : { phase: options.phase }),
      };
      return {
        output:
          `'${relative}' is outside the writable paths (${options.access.writable_paths.join(', ')}): the write is ` +
          `pending the product manager's approval as ${approval.id}. It is not written yet; you will hear the decision.`,
        isError: false,
        operation: { tool: 'Write', path: relative, outcome: 'pending-approval' },
        approval,
      };
    },
  };
}

/**
 * Writes an approved file: through the guard again, since the workspace may have changed since
 * the request (a symlink put in its way is refused, not followed). Returns the error text when
 * the write is refused.
 */
export async function applyApprovedWrite(options: {
  workspace: string;
  access: FileAccess;
  approval: Approval;
  runner: ProcessRunner;
}): Promise<{ ok: true } | { ok: false; error: string }> {
  const guard = workspaceGuard(options.workspace, options.access);
  const result = await executeTool(
    writeTool,
    { file_path: options.approval.path, content: options.approval.content },
    toolContext(guard, options.runner),
  );
  return result.isError ? { ok: false, error: result.output } : { ok: true };
}
