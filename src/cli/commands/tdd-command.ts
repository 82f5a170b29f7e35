import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { RatchetError } from '../../core/errors.js';
import type { RatchetEvent } from '../../core/events.js';
import { resolveRun, runIsActive } from '../../engine/run-control.js';
import {
  checkTddStart,
  isFinished,
  startTdd,
  resumeTdd,
  runModelFromFlag,
  runProviderFlags,
  type EngineServices,
  type ResumeTddOptions,
  type RunOutcome,
  type TddStartCheck,
} from '../../engine/tdd-run.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { Ledger } from '../../ledger/types.js';
import {
  checkServices,
  configFor,
  createCliOutput,
  engineServices,
  openExistingRepoLedger,
  openRepoLedger,
  repositoryRoot,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import type { Output } from '../output.js';

interface TddFlags extends ProviderFlags {
  allowDirty?: boolean;
  record?: string;
}

/**
 * What `tdd` and `resume` share: the repository, its configuration and ledger, and SIGINT/SIGTERM
 * stopping the run at the next safe point; `makeRun` starts or resumes the run, which is driven to
 * its end and rendered.
 */
async function driveTddRun(
  command: Command,
  flags: TddFlags,
  makeRun: (
    options: Omit<ResumeTddOptions, 'runId'>,
    services: EngineServices,
  ) => AsyncGenerator<RatchetEvent, RunOutcome>,
  /** How `resume` takes the run's own flags from the ledger; a new run has only the given ones. */
  flagsOf?: (ledger: Ledger, output: Output, repoRoot: string) => Promise<TddFlags>,
  openLedger: (repoRoot: string) => Promise<Ledger> = openRepoLedger,
  /** A new run's checks (see `checkTddStart`), made before the ledger is opened. */
  precheck?: (repoRoot: string, config: ResolvedConfig) => Promise<void>,
): Promise<{ output: Output; code: number; outcome: RunOutcome }> {
  const output = createCliOutput(command);
  const repoRoot = await repositoryRoot(command);
  // A new run's flags, configuration, repository and provider are checked before the ledger
  // exists: a refused one writes nothing into the repository.
  const fresh = flagsOf === undefined ? await configFor(repoRoot, flags) : undefined;
  if (fresh !== undefined) {
    refuseRecordingTheReplay(flags, fresh);
    await precheck?.(repoRoot, fresh);
  }
  await using ledger = await openLedger(repoRoot);
  const config = fresh ?? (await configFor(repoRoot, await flagsOf?.(ledger, output, repoRoot)));
  refuseRecordingTheReplay(flags, config);
  const interrupt = interruptOnSignals();
  try {
    const run = makeRun(
      { repoRoot, config, signal: interrupt.signal, ...(flags.record ? { recordPath: resolve(flags.record) } : {}) },
      engineServices(ledger),
    );
    return { output, ...(await driveRun(run, output, interrupt.bySigint)) };
  } finally {
    interrupt.dispose();
  }
}

/** `--record` naming the cassette being replayed would overwrite what is played. */
function refuseRecordingTheReplay(flags: TddFlags, config: ResolvedConfig): void {
  if (flags.record && config.provider.cassette === resolve(flags.record)) {
    throw new RatchetError('usage', `--record ${flags.record} is the cassette being replayed.`, {
      hint: 'Record into another file.',
    });
  }
}

export function addProviderOptions(command: Command): Command {
  return command
    .option('--provider <name>', 'anthropic | openai | openai-compatible | ollama | claude-code | replay')
    .option('--model <id>', 'model id, passed to the provider exactly as given')
    .option('--base-url <url>', 'provider endpoint (Anthropic: without /v1; OpenAI-compatible: with /v1)')
    .option('--cassette <file>', 'NDJSON cassette for --provider replay')
    .option('--record <file>', 'append every model call to this cassette (replay it later with --provider replay)')
    .option(
      '--no-sandbox',
      'run the model\'s commands and the tests without the bubblewrap sandbox, with your rights (as [bash] sandbox = "off")',
    );
}

export function registerTddCommands(program: Command, setExit: (code: number) => void): void {
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
      const request = { feature: feature.join(' '), allowDirty: Boolean(flags.allowDirty) };
      let checked: TddStartCheck | undefined;
      const { output, code, outcome } = await driveTddRun(
        command,
        flags,
        (options, services) => startTdd({ ...options, ...request, ...(checked ? { checked } : {}) }, services),
        undefined,
        openRepoLedger,
        // A dirty tree, no test command, a missing key...: refused before the ledger exists.
        async (repoRoot, config) => {
          checked = await checkTddStart({ repoRoot, config, ...request }, checkServices());
        },
      );
      if (code === 0 && !output.json) {
        output.out(
          `Review it: ${pc.cyan(`ratchet report ${outcome.runId}`)}, then ${pc.cyan('ratchet accept')} to merge or ${pc.cyan('ratchet reject')} to drop it.`,
        );
      }
      setExit(code);
    });

  addProviderOptions(
    program
      .command('resume')
      .description('Continue a run from its last checkpoint (after a failure, SIGINT, a crash or kill -9)')
      .argument('[run]', 'run id (default: the latest unfinished run)'),
  ).action(async (runId: string | undefined, flags: TddFlags, command: Command) => {
    const { code } = await driveTddRun(
      command,
      flags,
      (options, services) => resumeTdd({ ...options, ...(runId ? { runId } : {}) }, services),
      async (ledger, output, repoRoot) => {
        const run = await resolveRun(ledger, runId);
        const recorded = runProviderFlags(run);
        // Another provider given: its own model and endpoint, not the run's.
        if (flags.provider !== undefined && flags.provider !== recorded.provider) return flags;
        const given: TddFlags = Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined));
        // Said only of a run that will resume (resumeTdd refuses the others with the reason).
        // (and not of a run another process is still running: that one is refused as locked).
        const resumable = run.workflow === 'tdd' && !isFinished(run) && !(await runIsActive(run.repoRoot, run.id));
        if (!output.json && resumable && recorded.provider !== undefined) {
          const model = given.model ?? recorded.model;
          const how =
            given.model === undefined
              ? 'as it started (--provider and --model choose another)'
              : 'with the model given';
          output.out(pc.dim(`Resuming ${run.id} on ${recorded.provider}${model ? ` / ${model}` : ''}, ${how}.`));
        }
        const resumed: TddFlags = { ...recorded, ...given };
        // A model flag applies to every stage: the run's model goes in as one when it was given as
        // one or the configuration no longer names it, so the [stages.*] models the run started with
        // still apply.
        if (
          given.model === undefined &&
          recorded.model !== undefined &&
          recorded.provider !== 'replay' &&
          !runModelFromFlag(run)
        ) {
          const { model: _recorded, ...withoutModel } = resumed;
          if ((await configFor(repoRoot, withoutModel)).provider.model === recorded.model) return withoutModel;
        }
        return resumed;
      },
      // A repository without a ledger has no run to resume: say so, and create nothing.
      (repoRoot) => openExistingRepoLedger(repoRoot, runId),
    );
    setExit(code);
  });
}
