import type { ResolvedConfig } from '../../config/resolved.js';
import { Git } from '../../git/git.js';
import type { GateDecision } from '../../verify/gates.js';
import { verifyGate } from '../../verify/gates.js';
import { commandEnvironment } from '../../process/env.js';
import type { ProcessRunner } from '../../process/types.js';
import { runConfiguredChecks } from '../../verify/checks.js';
import { detectTestCommand } from '../../verify/detect.js';
import { runTests } from '../../verify/run-tests.js';
import { toolSandbox } from '../tool-sandbox.js';
import { shareDependencies } from '../worktree-setup.js';

/** What the verifier found on a merged layer. */
export interface LayerVerification {
  /** The tests' command, then each configured check's (lint, typecheck). */
  commands: string[];
  decision: GateDecision;
  /** Whether the commands ran in the bubblewrap sandbox (false only when the user opted out). */
  sandboxed: boolean;
  /**
   * Warnings from the sandbox: a shared dependency folder (`node_modules`, `.venv`) the merged
   * code had replaced, restored before a command (see `guardSharedDependencies`).
   */
  notices: string[];
}

export interface LayerVerifierOptions {
  /** The iteration's worktree, holding the merged layer. */
  worktree: string;
  /** The user's checkout: hidden from the commands; its dependency folders are shared read-only. */
  repoRoot: string;
  config: ResolvedConfig;
  runner: ProcessRunner;
  /** Ratchet's environment, which the commands' allowlisted one is made from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Names the sandbox's private area. */
  sandboxId: string;
  signal?: AbortSignal;
}

/**
 * Runs the project's tests (`[test] command`, else detected) and its configured lint and
 * typecheck on a merged layer, and decides with VERIFY's gate. The merged code is the agents',
 * so the commands run in the run's sandbox (`toolSandbox`: the checkout hidden, writes only to
 * the worktree), and where no sandbox works they are refused unless the user opted out.
 */
export async function verifyLayer(options: LayerVerifierOptions): Promise<LayerVerification> {
  const { config, worktree } = options;
  const detected = await detectTestCommand(worktree, config.test.command);
  // Shared as in a run's worktree (an entry already there stays): the guard then finds only what
  // the layer's code put in their place, and says so, instead of warning about a first share.
  await shareDependencies(options.repoRoot, worktree, new Git(worktree));
  await using sandbox = await toolSandbox(config, options.runner, {
    protect: [options.repoRoot],
    worktree,
    dependenciesOf: options.repoRoot,
    runId: options.sandboxId,
  });
  const environment = commandEnvironment(options.env, config.bash.env);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const tests = await runTests({
    command: detected.command,
    framework: detected.framework,
    cwd: worktree,
    runner: sandbox.runner,
    environment,
    timeoutMs: config.test.timeoutMs,
    ...signal,
  });
  const checks = (
    await runConfiguredChecks(config, { cwd: worktree, runner: sandbox.runner, environment, ...signal })
  ).map((check) => check.result);
  return {
    commands: [detected.command, ...checks.map((check) => check.command)],
    decision: verifyGate(tests, checks),
    sandboxed: sandbox.sandboxed,
    notices: sandbox.takeNotices(),
  };
}
