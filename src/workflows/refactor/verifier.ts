import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { isRatchetError } from '../../core/errors.js';
import type { StageName } from '../../core/stages.js';
import type { TestCaseResult } from '../../core/verification.js';
import type { Redactor } from '../../core/redact.js';
import type { ProcessRunner } from '../../process/types.js';
import { runCheck } from '../../verify/checks.js';
import { detectFramework, detectTestCommand } from '../../verify/detect.js';
import { testsGone } from '../../verify/gates.js';
import { countTests, runTests } from '../../verify/run-tests.js';
import type { CommandsRun, RefactorVerifier, VerifierCommandResult, VerifierRun } from './ports.js';

export interface CommandRunnerOptions {
  cwd: string;
  repoRoot: string;
  /** Each command's full output is kept here as `NNN-<stage>.log`. */
  outputDir: string;
  timeoutMs: number;
  runner: ProcessRunner;
  /** The environment the commands run with (see `commandEnvironment`); default: the allowlisted variables of Ratchet's. */
  environment?: Readonly<Record<string, string>>;
  /** Applied to every kept log: stored files hold no key, whatever a command printed. */
  redact: Redactor;
}

export interface CommandVerifierOptions extends CommandRunnerOptions {
  fast: string[];
  full: string[];
  /** The run's baseline, when another verifier ran it: the tests it passed must keep passing. */
  baseline?: VerifierRun;
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
      const result = await runCommand(options, command, name, signal);
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
 * Runs one command. A test runner Ratchet can read (`npm test`, `pytest`, `go test ./...`, ...)
 * runs as the TDD gates run it, so the ledger and the report name the tests that failed; it
 * passes or fails by its exit code all the same. Anything else runs as a plain check.
 */
async function runCommand(
  options: CommandRunnerOptions,
  command: string,
  name: string,
  signal: AbortSignal | undefined,
): Promise<VerifierCommandResult> {
  const check = (): Promise<VerifierCommandResult> =>
    runCheck({
      name,
      command,
      cwd: options.cwd,
      runner: options.runner,
      ...(options.environment ? { environment: options.environment } : {}),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
  if (detectFramework(command) === 'custom') return check();
  const { framework } = await detectTestCommand(options.cwd, command);
  try {
    const tests = await runTests({
      command,
      framework,
      cwd: options.cwd,
      runner: options.runner,
      ...(options.environment ? { environment: options.environment } : {}),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    // The configured command (not the one with the reporter options added), as the report shows it.
    // Results that disagree with the runner (a report rewritten, a runner stopped early) fail it;
    // a command whose results cannot be read passes or fails by its exit code, as a plain check.
    const ok = tests.exitCode === 0 && !tests.timedOut && tests.problem?.kind !== 'inconsistent';
    return { ...tests, command, name, ok };
  } catch (error) {
    // Its program is missing: a failing command like any other, as a plain check reports it.
    if (isRatchetError(error, 'config')) return check();
    throw error;
  }
}

/**
 * Seed 002, 9: the baseline runs both verifiers (a fast verifier that fails before any change would
 * blame every patch), the fast one runs after each patch, the full one every N batches and at the end.
 */
export function createCommandVerifier(
  options: CommandVerifierOptions,
  runCommands = createCommandsRunner(options),
): RefactorVerifier {
  /** Per test command, the tests that passed at the baseline: every later run must still pass them. */
  const passedAtBaseline = new Map<string, TestCaseResult[]>();
  const remember = (baseline: VerifierRun): void => {
    for (const { result } of baseline.results) {
      if ('tests' in result && result.source !== 'exit-code')
        passedAtBaseline.set(
          result.command,
          result.tests.filter((test) => test.status === 'passed'),
        );
    }
  };
  if (options.baseline !== undefined) remember(options.baseline);
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
      if (level === 'baseline') {
        remember({ level, ...run });
        return { level, ...run };
      }
      for (const entry of run.results) {
        const { result } = entry;
        if (!('tests' in result) || result.source === 'exit-code') continue;
        const expected = passedAtBaseline.get(result.command);
        if (expected === undefined || !result.ok) continue;
        const gone = new Set(
          testsGone(
            expected.map((test) => test.id),
            result,
          ),
        );
        if (gone.size === 0) continue;
        // Deleting or skipping a test makes a suite pass that should not: a refactoring keeps them all.
        const note = `\n\nRatchet: these tests passed at the baseline and did not pass now (they no longer ran, or were skipped); a refactoring keeps every test running:\n${[...gone].map((id) => `- ${id}`).join('\n')}\n`;
        const tests = [
          ...result.tests.filter((test) => !gone.has(test.id)),
          ...expected
            .filter((test) => gone.has(test.id))
            .map(({ durationMs: _, ...test }): TestCaseResult => ({
              ...test,
              status: 'failed',
              failureKind: 'missing',
              message: 'passed at the baseline; skipped or not run after this change',
            })),
        ];
        entry.result = { ...result, tests, counts: countTests(tests), output: `${result.output}${note}`, ok: false };
        run.ok = false;
        if (entry.outputFile !== null) await appendFile(join(options.repoRoot, entry.outputFile), note);
      }
      return { level, ...run };
    },
  };
}
