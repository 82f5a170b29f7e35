import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import type { ModelFlags } from '../../agent/models/run-models.js';
import { resumeRun } from '../../engine/resume-run.js';
import {
  configFor,
  createCliOutput,
  engineServices,
  openExistingRepoLedger,
  repositoryRoot,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface ResumeFlags extends ProviderFlags {
  record?: string;
}

/** The flags that choose a run's models, as given. */
function modelFlagsOf(flags: ProviderFlags): ModelFlags {
  return {
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.cassette ? { cassette: flags.cassette } : {}),
  };
}

/** `ratchet resume [run]`: continues a stopped run of any workflow that resumes (see `WorkflowDefinition.resume`). */
export function registerResumeCommand(program: Command, cli: CliSetup): void {
  addProviderOptions(
    program
      .command('resume')
      .description('Continue a run from its last checkpoint (after a failure, SIGINT, a crash or kill -9)')
      .argument('[run]', 'run id (default: the latest unfinished run)'),
  ).action(async (runId: string | undefined, flags: ResumeFlags, command: Command) => {
    const output = createCliOutput(command);
    const repoRoot = await repositoryRoot(command);
    // A repository without a ledger has no run to resume: say so, and create nothing.
    await using ledger = await openExistingRepoLedger(repoRoot, runId);
    // The run to resume is found inside `resumeRun`: every workflow is at hand.
    const registry = await cli.loadRegistry();
    const interrupt = interruptOnSignals();
    try {
      const run = resumeRun(
        registry,
        {
          repoRoot,
          ...(runId ? { runId } : {}),
          // The run's own models (it is never swapped silently), the flags given winning.
          flags: modelFlagsOf(flags),
          config: (models) => configFor(repoRoot, { ...flags, ...models }),
          signal: interrupt.signal,
          ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
          notice: (message) => {
            if (!output.json) output.out(pc.dim(message));
          },
        },
        engineServices(ledger),
      );
      cli.setExit((await driveRun(run, output, interrupt.bySigint)).code);
    } finally {
      interrupt.dispose();
    }
  });
}
