import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import type { ModelFlags } from '../../agent/models/run-models.js';
import { resumeRun } from '../../engine/resume-run.js';
import { startRun } from '../../engine/start-run.js';
import { tddWorkflow } from '../../workflows/tdd/definition.js';
import {
  configFor,
  createCliOutput,
  engineServices,
  openExistingRepoLedger,
  repositoryRoot,
  startServices,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface TddFlags extends ProviderFlags {
  allowDirty?: boolean;
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

export function registerTddCommands(program: Command, cli: CliSetup): void {
  addProviderOptions(
    program
      .command('tdd')
      .description(
        'Build a feature test-first: PLAN -> RED -> GREEN -> REFACTOR cycles over test-list.md, each accepted stage a commit on branch ratchet/<run-id>',
      )
      .argument('<feature...>', 'the feature to build, in plain words'),
  )
    .option('--allow-dirty', 'start from HEAD even though the working tree has uncommitted changes')
    .option('--refactor <mode>', 'always | when-needed | never (default from config: always)')
    .option('--max-attempts <n>', 'attempts per stage before the run stops (default 3)')
    .addHelpText(
      'after',
      '\nExamples:\n  ratchet tdd "Add a stack with push, pop and peek" --provider anthropic --model claude-sonnet-4-5\n  ratchet tdd "Parse durations like 1h30m" --provider ollama --model qwen2.5-coder\n',
    )
    .action(async (feature: string[], flags: TddFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      const interrupt = interruptOnSignals();
      try {
        const run = startRun(
          tddWorkflow,
          {
            directory: repoRoot,
            request: { feature: feature.join(' ') },
            config,
            allowDirty: Boolean(flags.allowDirty),
            signal: interrupt.signal,
            ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
          },
          // A dirty tree, no test command, a missing key...: refused before the ledger exists.
          startServices(),
        );
        const { code, outcome } = await driveRun(run, output, interrupt.bySigint);
        if (code === 0 && !output.json) {
          output.out(
            `Review it: ${pc.cyan(`ratchet report ${outcome.runId}`)}, then ${pc.cyan('ratchet accept')} to merge or ${pc.cyan('ratchet reject')} to drop it.`,
          );
        }
        cli.setExit(code);
      } finally {
        interrupt.dispose();
      }
    });

  addProviderOptions(
    program
      .command('resume')
      .description('Continue a run from its last checkpoint (after a failure, SIGINT, a crash or kill -9)')
      .argument('[run]', 'run id (default: the latest unfinished run)'),
  ).action(async (runId: string | undefined, flags: TddFlags, command: Command) => {
    const output = createCliOutput(command);
    const repoRoot = await repositoryRoot(command);
    // A repository without a ledger has no run to resume: say so, and create nothing.
    await using ledger = await openExistingRepoLedger(repoRoot, runId);
    const interrupt = interruptOnSignals();
    try {
      const run = resumeRun(
        cli.registry,
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
