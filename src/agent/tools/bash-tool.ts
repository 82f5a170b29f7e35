import { z } from 'zod';
import { commandEnvironment } from '../../process/env.js';
import { RatchetError } from '../../core/errors.js';
import type { AgentTool } from './agent-tool.js';
import { truncateMiddle } from './truncate-output.js';

/** Output shown to the model, in characters (head and tail kept). */
const BASH_OUTPUT_LIMIT = 30_000;

const bashInput = z.object({
  command: z.string().min(1).describe('The shell command to run (with /bin/sh -c) in the worktree directory.'),
  timeout: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Timeout in milliseconds. It can only shorten the stage timeout, never extend it.'),
});

export type BashInput = z.infer<typeof bashInput>;

/**
 * `Bash {command, timeout?}`: runs `/bin/sh -c command` in the worktree through the injected
 * `ProcessRunner`, with the stage's timeout (a given `timeout` may only shorten it). On timeout
 * the runner kills the whole process group. The result shows the combined output, cut to
 * about 30k characters keeping head and tail, and the exit code; a non-zero exit or a timeout
 * is an error result. An abort through the stage's signal throws `interrupted`.
 */
export const bashTool: AgentTool<BashInput> = {
  name: 'Bash',
  description:
    'Runs a shell command (/bin/sh -c) in the worktree directory and returns its combined stdout ' +
    `and stderr (long output is cut to about ${BASH_OUTPUT_LIMIT} characters, keeping the beginning ` +
    'and the end) and its exit code. Commands are killed, with every process they started, when ' +
    'they exceed the timeout. Use Read, Edit, Write, Glob and Grep for files rather than cat, sed or find.',
  inputSchema: bashInput,
  async execute(input, context) {
    const timeoutMs = Math.min(input.timeout ?? context.bashTimeoutMs, context.bashTimeoutMs);
    const result = await context.runner.run({
      command: input.command,
      cwd: context.guard.root,
      // Only the allowlisted environment: provider keys and every other secret stay out of the
      // agent's shell (and so out of tool output).
      env: { ...(context.environment ?? commandEnvironment(process.env)) },
      extendEnv: false,
      timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    if (result.aborted) throw new RatchetError('interrupted', 'Interrupted while running a Bash command');
    const parts: string[] = [];
    if (result.truncated) parts.push('[earlier output was dropped]');
    parts.push(
      result.output === '' ? '(no output)' : truncateMiddle(result.output.replace(/\n$/, ''), BASH_OUTPUT_LIMIT),
    );
    if (result.timedOut) {
      parts.push(`Command timed out after ${timeoutMs} ms; it was killed together with every process it started.`);
    } else if (result.exitCode === null) {
      parts.push(`Command was killed by signal ${result.signal ?? 'unknown'}.`);
    } else {
      parts.push(`Exit code: ${result.exitCode}`);
    }
    return { output: parts.join('\n'), isError: result.timedOut || result.exitCode !== 0 };
  },
};
