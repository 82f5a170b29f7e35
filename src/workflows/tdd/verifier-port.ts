import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { StageName } from '../../core/stages.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { Redactor } from '../../core/redact.js';
import type { ProcessRunner } from '../../process/types.js';
import { runConfiguredChecks } from '../../verify/checks.js';
import type { Framework } from '../../verify/detect.js';
import { runTests } from '../../verify/run-tests.js';
import { lockVerification } from '../../verify/verification-files.js';
import type { StoredCheck, VerifierPort } from './ports.js';

export interface VerifierPortOptions {
  worktree: string;
  repoRoot: string;
  /** Where full outputs are kept: `.ratchet/runs/<id>/verify`. */
  outputDir: string;
  command: string;
  framework: Framework;
  config: ResolvedConfig;
  runner: ProcessRunner;
  /** The environment the commands run with (see `commandEnvironment`). */
  environment: Readonly<Record<string, string>>;
  /** Applied to every kept log: stored files hold no key, whatever a command printed. */
  redact: Redactor;
}

/** Runs the project's own test, lint and typecheck commands in the worktree and keeps their output. */
export function createVerifierPort(options: VerifierPortOptions): VerifierPort {
  let seq = 0;
  const { redact } = options;
  const keep = async (stage: StageName, kind: string, output: string): Promise<string> => {
    await mkdir(options.outputDir, { recursive: true });
    const file = join(options.outputDir, `${String(++seq).padStart(3, '0')}-${stage.toLowerCase()}-${kind}.log`);
    await writeFile(file, redact(output));
    return relative(options.repoRoot, file);
  };
  const commands = [options.command, options.config.lint.command, options.config.typecheck.command].filter(
    (command): command is string => typeof command === 'string' && command !== '',
  );
  return {
    testCommand: options.command,
    lockVerification: () => lockVerification(options.worktree, commands),
    async runTests(stage, signal) {
      const result = await runTests({
        command: options.command,
        framework: options.framework,
        cwd: options.worktree,
        runner: options.runner,
        environment: options.environment,
        timeoutMs: options.config.test.timeoutMs,
        ...(signal ? { signal } : {}),
      });
      return { result, outputFile: await keep(stage, 'tests', result.output) };
    },
    async runChecks(stage, signal) {
      const checks: StoredCheck[] = [];
      const ran = await runConfiguredChecks(options.config, {
        cwd: options.worktree,
        runner: options.runner,
        environment: options.environment,
        ...(signal ? { signal } : {}),
      });
      for (const { kind, result } of ran)
        checks.push({ kind, result, outputFile: await keep(stage, kind, result.output) });
      return checks;
    },
  };
}
