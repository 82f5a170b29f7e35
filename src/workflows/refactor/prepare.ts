import { join } from 'node:path';
import { pipeEvents } from '../../core/event-pipe.js';
import type { EventInput } from '../../core/events.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { buildIndex } from '../../code/index/build-index.js';
import type { CodeIndex } from '../../code/index/types.js';
import { writeIndexArtifacts } from '../../code/index/artifacts.js';
import { Git } from '../../git/git.js';
import { goTestPlace, untestedGoModulesOf } from '../../verify/go-modules.js';
import type { RunBackup, RunContext, Steps } from '../definition.js';
import { boundPlannerBatches, heuristicPlan, type PlanBounds } from './plan.js';
import { fileFacts, planBounds, untestedPlanText } from './planning.js';
import type { VerifierRun } from './ports.js';
import { loadRolePrompts } from './role-prompts.js';
import { PlannerResponseSchema, type PlannedBatch } from './schemas.js';
import type { RefactorRunSettings } from './run-settings.js';
import { createCommandVerifier } from './verifier.js';

/** What the preparing steps hand to the batches, and to the confirmation screen. */
export interface PreparedRefactor {
  /** The baseline verification (every command passed). */
  baseline: VerifierRun;
  index: CodeIndex;
  /** `.ratchet/runs/<run-id>/artifacts`: the index's artifacts and the task ledger. */
  artifacts: string;
  plan: PlannedBatch[];
  planSource: 'heuristic' | 'planner';
  /** The backup the run made before anything changed (null: none recorded). */
  backup: RunBackup | null;
}

/**
 * `ratchet refactor run` up to the confirm screen (seed 002, 18): the baseline (refuses when
 * red), the index and its artifacts, the heuristic plan refined by the planner within bounds.
 * Nothing in the user's tree changes.
 */
export async function* prepareRefactor(context: RunContext<RefactorRunSettings>): Steps<PreparedRefactor> {
  const { run, config, settings } = context;
  const commands = settings.commands ?? { fast: [], full: [] };
  const verifier = createCommandVerifier({
    cwd: run.worktree,
    repoRoot: run.repoRoot,
    outputDir: join(context.runDir, 'verify'),
    fast: commands.fast,
    full: commands.full,
    timeoutMs: config.test.timeoutMs,
    runner: context.commands.runner,
    environment: context.commands.environment,
    // Logs and artifacts quote the project's output and text: none of them holds a key.
    redact: context.redact.stored,
  });
  yield { type: 'stage-start', stage: 'BASELINE', phase: 'SETUP', cycle: 0, attempt: 1 };
  const baseline = await verifier.run('baseline', 'BASELINE', context.signal);
  for (const entry of baseline.results)
    yield {
      type: 'verify-end',
      stage: 'BASELINE',
      kind: 'baseline',
      result: entry.result,
      outputFile: entry.outputFile,
    };
  const outcome = baseline.ok ? 'accepted' : 'rejected';
  yield { type: 'stage-end', stage: 'BASELINE', phase: 'SETUP', cycle: 0, attempt: 1, outcome };
  if (!baseline.ok) {
    const failed = baseline.results.find((entry) => !entry.result.ok);
    const where = failed
      ? ` \`${failed.result.command}\` exited ${String(failed.result.exitCode)}${failed.outputFile ? `; its output is in ${join(run.repoRoot, failed.outputFile)}` : ''}.`
      : '';
    throw new RatchetError(
      'gate-failed',
      `The baseline verification fails: refusing to refactor a red repository.${where}`,
      {
        hint: 'Make `ratchet refactor verify` pass first.',
        details: { runId: run.id },
      },
    );
  }
  const artifacts = join(context.runDir, 'artifacts');
  const index = await buildIndex({
    root: run.worktree,
    cacheDir: join(run.repoRoot, '.ratchet', 'index'),
    excludes: config.refactor.scopeExcludes,
    git: new Git(run.worktree),
    ...(context.signal ? { signal: context.signal } : {}),
  });
  await writeIndexArtifacts(index, artifacts, { redact: context.redact.stored });
  yield {
    type: 'index-build',
    files: index.files.length,
    parsed: index.stats.parsed,
    reused: index.stats.reused,
    symbols: index.files.reduce((sum, file) => sum + file.symbols.length, 0),
    durationMs: index.stats.durationMs,
    artifacts,
  };
  // A nested Go module the test command stops at: no batch there, and the run says so.
  const untested = await untestedGoModulesOf(run.worktree, [...commands.fast, ...commands.full]);
  if (untested.length > 0)
    yield { type: 'warning', message: untestedPlanText(untested, await goTestPlace(run.worktree)) };
  const bounds = planBounds(config.refactor, index, commands, run.worktree, untested);
  const heuristic = heuristicPlan(await fileFacts(index, run.worktree, config), {
    goal: settings.goal ?? null,
    bounds,
  });
  const planned = heuristic.length > 0 ? yield* planWithPlanner(context, heuristic, index, bounds) : null;
  const plan = planned ?? heuristic;
  const planSource = planned === null ? 'heuristic' : 'planner';
  yield { type: 'plan-create', batches: plan.length, source: planSource, goal: settings.goal ?? null };
  return { baseline, index, artifacts, plan, planSource, backup: settings.backup ?? null };
}

/**
 * The planner's refinement of the heuristic plan, within the same bounds; null when it has none
 * to offer (no plan, or none left within bounds) or failed for a reason that does not doom the
 * batches too (the heuristic plan stands, with a warning).
 */
async function* planWithPlanner(
  context: RunContext<RefactorRunSettings>,
  heuristic: PlannedBatch[],
  index: CodeIndex,
  bounds: PlanBounds,
): Steps<PlannedBatch[] | null> {
  const { run, config, settings } = context;
  const refactor = config.refactor;
  const prompts = await loadRolePrompts();
  yield { type: 'stage-start', stage: 'PLANNER', phase: 'SETUP', cycle: 0, attempt: 1 };
  const prompt = [
    settings.goal
      ? `Goal of this run: ${settings.goal}`
      : 'Goal of this run: improve the code base safely, in small batches.',
    `At most ${refactor.maxBatches} batches; diff budget per batch at most ${refactor.diffBudgetLoc} lines.`,
    `Every batch's scope_globs must stay within: ${refactor.scopeGlobs.join(', ')}.`,
    `Excluded from every scope: ${refactor.scopeExcludes.join(', ') || 'nothing'}.`,
    '',
    'Heuristic plan (from the index):',
    JSON.stringify({ batches: heuristic }, null, 2),
    '',
    'Riskiest files (risk register):',
    ...index.risk
      .slice(0, 15)
      .map(
        (entry) =>
          `- ${entry.path}: score ${entry.score}, fan-in ${entry.fanIn}, churn ${entry.churn}, ${entry.lines} lines, tests: ${entry.tests.length}`,
      ),
  ].join('\n');
  try {
    // Its events (retries included) stream as they come, and are recorded even when it fails.
    const outcome = yield* pipeEvents((emit) =>
      context.agents.forStage('REFACTOR', { allowed: 'Read,Grep,Glob', offered: 'Read,Grep,Glob' }).runStage({
        stage: 'PLANNER',
        worktree: run.worktree,
        systemPrompt: prompts.planner,
        prompt,
        paths: { read: ['**'], write: [], denyWrite: ['**'] },
        maxTurns: refactor.claude.maxTurnsPlanner,
        bashTimeoutMs: config.bash.timeoutMs,
        outputSchema: PlannerResponseSchema,
        ...(context.signal ? { signal: context.signal } : {}),
        emit,
      }),
    );
    if (outcome.status !== 'completed' || !outcome.output) {
      yield plannerEnd('rejected', outcome.status === 'completed' ? 'no plan' : outcome.message);
      return null;
    }
    const bounded = boundPlannerBatches(outcome.output, { ...bounds, heuristic });
    for (const problem of bounded.dropped)
      yield { type: 'warning', stage: 'PLANNER', message: `planner batch dropped: ${problem}` };
    yield plannerEnd('accepted', `${bounded.batches.length} ${bounded.batches.length === 1 ? 'batch' : 'batches'}`);
    return bounded.batches.length > 0 ? bounded.batches : null;
  } catch (error) {
    const failure = toRatchetError(error);
    // A provider that cannot be used or reached (after the retries) would fail every batch too:
    // stop now, before anything is confirmed (seed 002, 19), rather than on the first patch.
    yield plannerEnd('error', `${failure.code}: ${failure.message}`);
    if (['auth', 'config', 'interrupted', 'network'].includes(failure.code)) throw failure;
    yield { type: 'warning', stage: 'PLANNER', message: 'The planner failed; the heuristic plan stands.' };
    return null;
  }
}

/** The end of the run's one PLANNER attempt. */
function plannerEnd(outcome: 'accepted' | 'rejected' | 'error', reason: string): EventInput {
  return { type: 'stage-end', stage: 'PLANNER', phase: 'SETUP', cycle: 0, attempt: 1, outcome, reason };
}
