import type { Command } from 'commander';
import pc from 'picocolors';
import { currentLayerTarget, mergeCurrentLayer, teamLayerStores } from '../../engine/team/layer-state.js';
import { reviewLayer, setupLayer, type LayerMerge, type LayerReview } from '../../engine/team/layer-worktrees.js';
import { createProcessRunner } from '../../process/runner.js';
import { teamDirOf } from '../../workflows/team/setup.js';
import { configFor, createCliOutput, repositoryRoot, type ProviderFlags } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import { recordingIteration } from '../team-ledger.js';
import { describeMerge, describeUnassigned } from '../tui/layer-text.js';
import type { CliSetup } from './cli-setup.js';
import { teamGroup } from './team-group.js';

/** `ratchet team worktrees setup|review|merge`: the current layer's per-task worktrees. */
export function registerTeamWorktreesCommands(program: Command, cli: CliSetup): void {
  const worktrees = teamGroup(program)
    .command('worktrees')
    .description(
      "Per-task worktrees for the current iteration's dependency layer (from tasks.json): setup, review, merge",
    );

  worktrees
    .command('setup')
    .description(
      "Create one branch and worktree per task of the current layer, from the iteration's branch (what the team wrote there committed first), beside the iteration's worktree under $RATCHET_HOME; your checkout is not touched",
    )
    .action(async (_flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const setup = await setupLayer(await currentLayerTarget(teamLayerStores(repoRoot), repoRoot));
      if (output.json) return output.out(JSON.stringify(setup));
      output.out(`Iteration branch ${setup.iterationBranch} (worktree ${setup.iterationWorktree})`);
      output.out(`Layer base ${setup.base.slice(0, 8)}`);
      for (const task of setup.tasks) output.out(`  ${task.id}  ${task.branch}  ${task.worktree}  (${task.made})`);
      for (const line of describeUnassigned(setup.unassigned)) output.err(pc.yellow(line));
      output.out("Review with 'ratchet team worktrees review', merge with 'ratchet team worktrees merge'.");
    });

  worktrees
    .command('review')
    .description("Show each task branch's diff against the layer's base, and whether it is merged")
    .option('--stat', 'only the files and line counts, not the diffs')
    .action(async (flags: { stat?: boolean }, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const review = await reviewLayer(await currentLayerTarget(teamLayerStores(repoRoot), repoRoot));
      if (output.json) return output.out(JSON.stringify(review));
      printReview(output, review, Boolean(flags.stat));
    });

  worktrees
    .command('merge')
    .description(
      "Merge the layer's task branches into the iteration's branch in tasks.json order (their uncommitted changes committed first), run the tests, lint and typecheck there in the sandbox and, green, start the next layer; a conflict or a red verifier leaves the iteration's branch as it was",
    )
    .option(
      '--no-sandbox',
      'run the tests without the bubblewrap sandbox, with your rights (as [bash] sandbox = "off")',
    )
    .option('--allow-empty', 'merge even when a task branch holds no change (a task that needed none)')
    .action(async (flags: ProviderFlags & { allowEmpty?: boolean }, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      // Green, each task's merge is a checkpoint of the iteration's ledger run (`report`, `status`).
      const target = { repoRoot, teamDir: teamDirOf(repoRoot), config, signal: new AbortController().signal };
      const { result } = await recordingIteration(target, (record) =>
        mergeCurrentLayer(
          repoRoot,
          {
            ...(flags.allowEmpty === true ? { allowEmpty: true } : {}),
            config,
            runner: createProcessRunner(),
            env: process.env,
          },
          record,
        ),
      );
      if (output.json) output.out(JSON.stringify(result));
      else printMerge(output, result);
      cli.setExit(result.outcome === 'merged' ? EXIT.ok : EXIT.gateFailed);
    });
}

function printReview(output: Output, review: LayerReview, statOnly: boolean): void {
  output.out(`Layer ${review.layer} of ${review.iterationBranch}, base ${review.base.slice(0, 8)}`);
  for (const task of review.tasks) {
    output.out('');
    if (task.status === 'missing') {
      output.out(`${pc.bold(task.id)}  ${pc.yellow('no branch')}  (run 'ratchet team worktrees setup')`);
      continue;
    }
    const counts = `${task.stat.files.length} file(s), +${task.stat.added} -${task.stat.deleted}`;
    output.out(`${pc.bold(task.id)}  ${task.status}  ${task.branch}  ${counts}`);
    if (task.uncommitted.length > 0)
      output.out(`  uncommitted in ${task.worktree} (merge commits them): ${task.uncommitted.join(', ')}`);
    for (const file of task.stat.files) output.out(`  ${file.path}  +${file.added} -${file.deleted}`);
    if (!statOnly && task.diff !== '') output.out(task.diff.trimEnd());
    if (!statOnly && task.pending !== '') output.out(task.pending.trimEnd());
  }
}

function printMerge(output: Output, result: LayerMerge): void {
  for (const line of describeMerge(result)) {
    if (result.outcome === 'merged') output.out(line);
    else output.err(line);
  }
}
