import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { StageName } from '../../core/stages.js';
import type { ProcessRunner } from '../../process/types.js';
import { runCheck } from '../../verify/checks.js';
import type { RefactorVerifier, VerifierRun } from '../../workflows/refactor/ports.js';

export interface CommandVerifierOptions {
  cwd: string;
  repoRoot: string;
  outputDir: string;
  fast: string[];
  full: string[];
  timeoutMs: number;
  runner: ProcessRunner;
}

/** Seed 002, 9: the fast verifier after each patch, the full one every N batches and at the end. */
export function createCommandVerifier(options: CommandVerifierOptions): RefactorVerifier {
  let seq = 0;
  return {
    async run(level, stage: StageName, signal) {
      const commands = level === 'fast' ? options.fast : options.full;
      const run: VerifierRun = { level, ok: true, results: [] };
      for (const command of commands) {
        const result = await runCheck({ name: level, command, cwd: options.cwd, runner: options.runner, timeoutMs: options.timeoutMs, ...(signal ? { signal } : {}) });
        await mkdir(options.outputDir, { recursive: true });
        const file = join(options.outputDir, `${String(++seq).padStart(3, '0')}-${stage.toLowerCase()}.log`);
        await writeFile(file, `$ ${command}\n${result.output}`);
        run.results.push({ result, outputFile: relative(options.repoRoot, file) });
        if (!result.ok) {
          run.ok = false;
          break;
        }
      }
      return run;
    },
  };
}
