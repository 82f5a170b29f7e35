import { RatchetError } from '../core/errors.js';
import type { CheckResult } from '../core/verification.js';
import { commandEnvironment } from '../process/env.js';
import type { ProcessRunner } from '../process/types.js';

export interface RunCheckOptions {
  /** What the check is, e.g. `lint` or `typecheck`. */
  name: string;
  command: string;
  cwd: string;
  runner: ProcessRunner;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * The environment the command runs with (see `commandEnvironment`: an allowlist, nothing
   * inherited); default: the allowlisted variables of Ratchet's own environment.
   */
  environment?: Readonly<Record<string, string>>;
  /** Cap of the output kept (tail), default 64 KiB. */
  maxOutputBytes?: number;
}

/**
 * Runs a non-test check (lint, typecheck). It passes when the command exits 0 in time.
 * Throws `interrupted` when `signal` fires.
 */
export async function runCheck(options: RunCheckOptions): Promise<CheckResult> {
  const { name, command, cwd, runner, timeoutMs, signal } = options;
  const run = await runner.run({
    command,
    cwd,
    env: { ...(options.environment ?? commandEnvironment(process.env)) },
    extendEnv: false,
    timeoutMs,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
    ...(signal === undefined ? {} : { signal }),
  });
  if (run.aborted || signal?.aborted === true) {
    throw new RatchetError('interrupted', `Interrupted while running ${name}`, { cause: signal?.reason });
  }
  return {
    name,
    command,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    output: run.output,
    ok: run.exitCode === 0 && !run.timedOut,
  };
}

/** The project's checks besides its tests, in the order Ratchet runs them. */
const CHECK_KINDS = ['lint', 'typecheck'] as const;

/**
 * Runs the configured lint and typecheck commands (`[lint] command`, `[typecheck] command`; an
 * unset one is skipped), one after the other, each with the tests' timeout.
 */
export async function runConfiguredChecks(
  config: Readonly<Record<(typeof CHECK_KINDS)[number], { command?: string | undefined }>> & {
    test: { timeoutMs: number };
  },
  options: Pick<RunCheckOptions, 'cwd' | 'runner' | 'environment' | 'signal'>,
): Promise<Array<{ kind: (typeof CHECK_KINDS)[number]; result: CheckResult }>> {
  const checks: Array<{ kind: (typeof CHECK_KINDS)[number]; result: CheckResult }> = [];
  for (const kind of CHECK_KINDS) {
    const command = config[kind].command;
    if (!command) continue;
    checks.push({
      kind,
      result: await runCheck({ ...options, name: kind, command, timeoutMs: config.test.timeoutMs }),
    });
  }
  return checks;
}
