import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { StageName } from '../../core/stages.js';
import type { Redactor } from '../../core/redact.js';
import type { ProcessRunner } from '../../process/types.js';
import { runCheck } from '../../verify/checks.js';
import type { CommandsRun, RefactorVerifier } from '../../workflows/refactor/ports.js';

export interface CommandRunnerOptions {
  cwd: string;
  repoRoot: string;
  /** Each command's full output is kept here as `NNN-<stage>.log`. */
  outputDir: string;
  timeoutMs: number;
  runner: ProcessRunner;
  /** Applied to every kept log: stored files hold no key, whatever a command printed. */
  redact: Redactor;
}

export interface CommandVerifierOptions extends CommandRunnerOptions {
  fast: string[];
  full: string[];
}

/** Runs commands in the worktree in order, stopping at the first failure; output kept per command. */
export type CommandsRunner = (
  commands: readonly string[],
  name: string,
  stage: StageName,
  signal?: AbortSignal,
) => Promise<CommandsRun>;

export function createCommandsRunner(options: CommandRunnerOptions): CommandsRunner {
  let seq = 0;
  const { redact } = options;
  return async (commands, name, stage, signal) => {
    const run: CommandsRun = { ok: true, results: [] };
    for (const command of commands) {
      const result = await runCheck({
        name,
        command,
        cwd: options.cwd,
        runner: options.runner,
        timeoutMs: options.timeoutMs,
        ...(signal ? { signal } : {}),
      });
      await mkdir(options.outputDir, { recursive: true });
      const file = join(options.outputDir, `${String(++seq).padStart(3, '0')}-${stage.toLowerCase()}.log`);
      await writeFile(file, redact(`$ ${command}\n${result.output}`));
      run.results.push({ result, outputFile: relative(options.repoRoot, file) });
      if (!result.ok) {
        run.ok = false;
        break;
      }
    }
    return run;
  };
}

/**
 * Seed 002, 9: the baseline runs both verifiers (a fast verifier that fails before any change would
 * blame every patch), the fast one runs after each patch, the full one every N batches and at the end.
 */
export function createCommandVerifier(
  options: CommandVerifierOptions,
  runCommands = createCommandsRunner(options),
): RefactorVerifier {
  return {
    async run(level, stage, signal) {
      const commands =
        level === 'fast'
          ? options.fast
          : level === 'full'
            ? options.full
            : [...new Set([...options.full, ...options.fast])];
      // The check's name, in messages such as "Interrupted while running the fast verifier".
      const run = await runCommands(commands, `the ${level} verifier`, stage, signal);
      return { level, ...run };
    },
  };
}
