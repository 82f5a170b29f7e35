import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { packageRoot } from '../../config/prompts.js';
import { RatchetError } from '../../core/errors.js';
import type { ModelClient } from '../../core/model.js';
import { systemClock } from '../../engine/effects.js';
import { createProcessRunner } from '../../process/runner.js';
import { advanceIteration } from '../../workflows/team/advance.js';
import { approveWrite, denyWrite } from '../../workflows/team/approvals.js';
import type { Speaker, TeamContext } from '../../workflows/team/context.js';
import { continueIteration, speakerModels, type ContinueOptions } from '../../workflows/team/continue-iteration.js';
import { createIterationStore } from '../../workflows/team/file-stores.js';
import { iterationStores, type IterationStores } from '../../workflows/team/iteration-session.js';
import { groomTopic } from '../../workflows/team/groom-topic.js';
import { iterationCheckpoints } from '../../workflows/team/iteration-checkpoints.js';
import { initTeam, loadTeamContext } from '../../workflows/team/setup.js';
import type { Iteration } from '../../workflows/team/types.js';
import { startIteration } from '../../workflows/team/start-iteration.js';
import { configFor, createCliOutput, repositoryRoot, type ProviderFlags } from '../context.js';
import { recordingIteration } from '../team-ledger.js';
import { interruptOnSignals } from '../drive-run.js';
import type { Output } from '../output.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import { renderApproval, renderMessage, renderTeamEvent } from './team-output.js';

interface SessionFlags extends ProviderFlags {
  maxTurns?: string;
  message?: string;
  record?: string;
  coach?: boolean;
  force?: boolean;
}

/** `--max-turns` and the like: a positive whole number, or a usage error naming the flag. */
export function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new RatchetError('usage', `${flag} must be a positive whole number, got "${value}".`);
  return number;
}

async function teamContext(command: Command): Promise<TeamContext> {
  return loadTeamContext({ projectRoot: await repositoryRoot(command), packageRoot: packageRoot(), env: process.env });
}

/** Each speaker's client (see `speakerModels`), from the provider the flags and config name. */
async function modelsFor(ctx: TeamContext, flags: SessionFlags): Promise<(speaker: Speaker) => ModelClient> {
  return speakerModels(await configFor(ctx.projectRoot, flags), {
    env: process.env,
    recordPath: flags.record ? resolve(flags.record) : undefined,
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
  });
}

/** Where a command's calls are recorded: the iteration's ledger run (see cli/team-ledger.ts). */
async function ledgerTarget(ctx: TeamContext, flags: SessionFlags, signal: AbortSignal) {
  return { repoRoot: ctx.projectRoot, teamDir: ctx.teamDir, config: await configFor(ctx.projectRoot, flags), signal };
}
/**
 * Drives a session of the current iteration (`continueIteration` persists each event), showing
 * every event, then says which checkpoint it saved.
 */
async function driveIteration(
  ctx: TeamContext,
  flags: SessionFlags,
  output: Output,
  options: Omit<ContinueOptions, 'pendingHint'> = {},
): Promise<void> {
  const modelFor = await modelsFor(ctx, flags);
  const interrupt = interruptOnSignals();
  try {
    const target = await ledgerTarget(ctx, flags, interrupt.signal);
    await recordingIteration(target, async (record) => {
      const events = continueIteration(
        ctx,
        { modelFor, runner: createProcessRunner(), signal: interrupt.signal, record },
        {
          ...options,
          pendingHint: 'Resolve them first: `ratchet team approvals`, then `approve <id>` or `deny <id>`.',
        },
      );
      for (;;) {
        const next = await events.next();
        if (next.done === true) {
          if (!output.json && next.value.checkpoint !== null)
            output.out(pc.dim(`Checkpoint ${next.value.checkpoint} saved.`));
          return;
        }
        renderTeamEvent(next.value, output);
      }
    });
  } finally {
    interrupt.dispose();
  }
}

async function currentStores(ctx: TeamContext): Promise<{ stores: IterationStores; iteration: Iteration }> {
  const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
  return { iteration, stores: iterationStores(ctx, dir, iteration.id) };
}

function registerSessionCommands(team: Command, cli: CliSetup): void {
  addProviderOptions(
    team
      .command('run')
      .description(
        'Start a new iteration: the agents and the coach talk it through from refinement, writing files in a worktree of its own branch',
      )
      .argument('<description>', 'what the iteration is about'),
  )
    .option('--max-turns <n>', 'agent turns per phase (default: max_turns of .team/team.json)')
    .action(async (description: string, flags: SessionFlags, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      const config = await configFor(ctx.projectRoot, flags);
      const { iteration, workspace } = await startIteration(ctx, {
        description,
        maxTurns: positive(flags.maxTurns, '--max-turns') ?? ctx.config.max_turns,
        home: config.home,
      });
      if (!output.json)
        output.out(pc.dim(`${iteration.id}: agents write in ${workspace.workspace} (branch ${workspace.branch}).`));
      await driveIteration(ctx, flags, output);
      cli.setExit(0);
    });

  addProviderOptions(
    team
      .command('continue')
      .description("Continue the current iteration's conversation, optionally answering the coach first (-m)"),
  )
    .option('-m, --message <answer>', 'your answer to the coach, added to the conversation as the PM')
    .option('--max-turns <n>', 'allow this many more agent turns in this phase')
    .action(async (flags: SessionFlags, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      await driveIteration(ctx, flags, output, {
        answer: flags.message,
        moreTurns: positive(flags.maxTurns, '--max-turns'),
      });
    });

  addProviderOptions(
    team
      .command('advance')
      .description(
        'Move the current iteration to its next phase; the coach extracts what the phase produced (groomed.md, tasks.json with layers, implementation notes)',
      ),
  )
    .option('--force', 'leave implementation although layers of tasks.json were never merged')
    .action(async (flags: SessionFlags, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      const modelFor = await modelsFor(ctx, flags);
      const interrupt = interruptOnSignals();
      try {
        const result = await recordingIteration(await ledgerTarget(ctx, flags, interrupt.signal), (record) =>
          advanceIteration(ctx, { modelFor, signal: interrupt.signal, record, force: flags.force === true }),
        );
        if (output.json) {
          output.out(
            JSON.stringify({
              type: 'phase-advance',
              from: result.from,
              to: result.to,
              written: result.written,
              problems: result.problems,
              tasks: result.tasks,
            }),
          );
          return;
        }
        for (const file of result.written) output.out(`Wrote ${file}`);
        for (const problem of result.problems)
          output.err(
            pc.yellow(
              `Could not extract ${problem.artifact}: ${problem.problem}. The model's reply is kept in ${problem.rawFile}; ` +
                'write the artifact by hand from it if you need it.',
            ),
          );
        if (result.tasks !== null && result.from === 'planning') {
          const layers = new Map<number, string[]>();
          for (const task of result.tasks)
            layers.set(task.layer ?? 0, [...(layers.get(task.layer ?? 0) ?? []), task.id]);
          for (const [layer, ids] of [...layers].sort((a, b) => a[0] - b[0]))
            output.out(`  layer ${layer}: ${ids.join(', ')}`);
        }
        // Implementation starts with the layer's worktrees: without them the agents write where no merge verifies.
        const next =
          result.to === 'implementation' && result.tasks !== null && result.tasks.length > 0
            ? `${pc.cyan('ratchet team worktrees setup')} (a worktree for each task of layer 0), then ${pc.cyan('ratchet team continue')}`
            : pc.cyan('ratchet team continue');
        output.out(`${result.iteration.id}: ${result.from} -> ${pc.bold(result.to)}. Next: ${next}`);
      } finally {
        interrupt.dispose();
      }
    });

  addProviderOptions(
    team
      .command('groom')
      .description(
        'A freeform conversation about a topic outside any iteration (.team/grooming/<slug>/): no phases, no files',
      )
      .argument('<topic>', 'what to explore'),
  )
    .option('--max-turns <n>', 'agent turns (default: two rounds)')
    .option('--coach', 'let the coach facilitate too')
    .action(async (topic: string, flags: SessionFlags, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      const modelFor = await modelsFor(ctx, flags);
      const interrupt = interruptOnSignals();
      try {
        const events = groomTopic(
          ctx,
          { modelFor, runner: createProcessRunner(), signal: interrupt.signal },
          {
            topic,
            maxTurns: positive(flags.maxTurns, '--max-turns') ?? ctx.config.agents.length * 2,
            withCoach: Boolean(flags.coach),
          },
        );
        for (;;) {
          const next = await events.next();
          if (next.done === true) {
            if (!output.json) output.out(pc.dim(`Conversation kept in ${next.value.logPath}`));
            break;
          }
          renderTeamEvent(next.value, output);
        }
      } finally {
        interrupt.dispose();
      }
    });
}

function registerApprovalCommands(team: Command): void {
  team
    .command('approvals')
    .description('List the writes of the current iteration that went outside the writable paths, and their decisions')
    .action(async (_flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const { stores } = await currentStores(await teamContext(command));
      const approvals = await stores.approvals.list();
      if (output.json) {
        output.out(JSON.stringify({ approvals }));
        return;
      }
      if (approvals.length === 0) output.out(pc.dim('No approvals.'));
      for (const approval of approvals) output.out(renderApproval(approval));
    });

  team
    .command('approve')
    .description(
      'Approve a pending write: the file is written where the agent may write now (refused, and said why, when that place is gone)',
    )
    .argument('<id>', 'the approval id (ratchet team approvals)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      const { iteration, stores } = await currentStores(ctx);
      const decision = await approveWrite(ctx, { iteration, stores, id, runner: createProcessRunner() });
      if (output.json) output.out(JSON.stringify(decision));
      else output.out(renderMessage(decision.msg));
      if (decision.writeError !== null)
        throw new RatchetError('usage', `Approved, but not written: ${decision.writeError}`);
    });

  team
    .command('deny')
    .description('Deny a pending write; the agents are told, with your reason')
    .argument('<id>', 'the approval id (ratchet team approvals)')
    .option('-m, --message <why>', 'why, for the agents')
    .action(async (id: string, flags: { message?: string }, command: Command) => {
      const output = createCliOutput(command);
      const ctx = await teamContext(command);
      const { iteration, stores } = await currentStores(ctx);
      const decision = await denyWrite({ iteration, stores, id, reason: flags.message });
      if (output.json) output.out(JSON.stringify(decision));
      else output.out(renderMessage(decision.msg));
    });
}

function registerCheckpointCommands(team: Command): void {
  const checkpoint = team
    .command('checkpoint')
    .description("Snapshots of the current iteration's state (iteration.json, logs, approvals, artifacts)");
  checkpoint
    .command('create')
    .description("Save the iteration's state now")
    .argument('[description]', 'what this checkpoint is', 'manual')
    .action(async (description: string, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const info = await iterationCheckpoints(await teamContext(command)).create(description);
      output.out(output.json ? JSON.stringify(info) : `Checkpoint ${info.number} (${info.phase}): ${info.description}`);
    });
  checkpoint
    .command('list')
    .description("List the iteration's checkpoints")
    .action(async (_flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const infos = await iterationCheckpoints(await teamContext(command)).list();
      if (output.json) {
        output.out(JSON.stringify({ checkpoints: infos }));
        return;
      }
      if (infos.length === 0) output.out(pc.dim('No checkpoints.'));
      for (const info of infos)
        output.out(
          `${String(info.number).padStart(3)}  ${info.phase.padEnd(16)} ${pc.dim(info.createdAt)}  ${info.description}`,
        );
    });
  checkpoint
    .command('restore')
    .description("Make the iteration's state exactly what checkpoint <n> saved")
    .argument('<n>', 'the checkpoint number')
    .action(async (value: string, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const number = positive(value, '<n>') ?? 0;
      const info = await iterationCheckpoints(await teamContext(command)).restore(number);
      output.out(
        output.json ? JSON.stringify(info) : `Restored checkpoint ${info.number} (${info.phase}): ${info.description}`,
      );
    });
}

/** `ratchet team ...`: a team of agents and a coach through an iteration's phases (seed 001). */
export function registerTeamCommands(program: Command, cli: CliSetup): void {
  const team = program
    .command('team')
    .description(
      'A team of agents and a coach talking an iteration through refinement, planning, reviews and implementation',
    );

  team
    .command('init')
    .description(
      'Set up .team/: team.json (agents, coach, models, file access; not when [team] in .ratchet/config.toml sets them) and prompts.toml; never overwrites',
    )
    .option('--agents <n>', 'how many agents', '2')
    .action(async (flags: { agents: string }, command: Command) => {
      const output = createCliOutput(command);
      const result = await initTeam({
        projectRoot: await repositoryRoot(command),
        packageRoot: packageRoot(),
        agents: Number(flags.agents),
      });
      if (output.json) output.out(JSON.stringify(result));
      else {
        for (const file of result.files) output.out(`Wrote ${file}`);
        output.out(`Next: ${pc.cyan('ratchet team run "<iteration description>"')}`);
      }
    });

  registerSessionCommands(team, cli);
  registerApprovalCommands(team);
  registerCheckpointCommands(team);
}
