import { RatchetError } from '../../core/errors.js';
import type { EventInput } from '../../core/events.js';
import type { SolvePassStage } from '../../core/stages.js';
import type { VerificationLock } from '../../verify/verification-files.js';
import { implementStep } from './implement-step.js';
import type { SolveContext, Step } from './model-pass.js';
import { planArtifactFromMetaPlan } from './parse-plan.js';
import { adjustmentPass, metaPlanPass, partPlanPass } from './plan-passes.js';
import { dependencyOrder } from './plan-validation.js';
import type { SolveDependencies, SolvePolicy } from './ports.js';
import { initialProgress, progressCounts, solveStatus, type SolveProgress } from './progress.js';
import type { MetaPlanPart, PartPlan, PlanArtifact, PlanStep } from './schemas.js';

/**
 * The solve workflow of seed 004 over its ports: META_PLAN splits the task into parts; for each
 * part (in dependency order) PART_PLAN splits it into steps; each step is implemented and tested
 * (`implementStep`), then ADJUSTMENT revises the steps that remain, and a checkpoint keeps the
 * step's changes (none when it failed) and the progress. Every pass has a context of its own.
 *
 * It ends when (a) every part's steps have run: `complete` when all succeeded, `partial` when
 * some did, `failed` when none did; (b) the meta-plan cannot be made (`failed`, nothing changed);
 * (c) a provider error survives its retries, or the signal fires: thrown, and the last checkpoint
 * is where `start` resumes. A failed part plan or step never stops the others.
 */
export interface SolveResult {
  status: 'complete' | 'partial' | 'failed';
  progress: SolveProgress;
}

const DEFAULT_MAX_STEPS_PER_PART = 12;

function subject(prefix: string, text: string): string {
  const line = `${prefix}: ${text.split('\n')[0] ?? ''}`;
  return line.length > 72 ? `${line.slice(0, 71)}…` : line;
}

function progressEvent(progress: SolveProgress, status: SolveResult['status'] | 'running'): EventInput {
  return { type: 'solve-progress', mode: progress.mode, status, ...progressCounts(progress) };
}

async function* checkpoint(context: SolveContext, stage: SolvePassStage, text: string): Step<void> {
  const commit = await context.deps.workspace.checkpoint(text, structuredClone(context.progress));
  yield { type: 'checkpoint-create', stage, phase: 'SOLVE', commit, subject: text };
  yield progressEvent(context.progress, 'running');
}

function* finish(context: SolveContext): Generator<EventInput, SolveResult> {
  const status = solveStatus(context.progress);
  yield progressEvent(context.progress, status);
  return { status, progress: context.progress };
}

function newContext(
  policy: SolvePolicy,
  deps: SolveDependencies,
  progress: SolveProgress,
  signal: AbortSignal | undefined,
): SolveContext {
  return { policy, deps, signal, progress: structuredClone(progress) };
}

/** The part's steps that have not run, the next first. */
function nextStep(context: SolveContext, plan: PartPlan): PlanStep | undefined {
  const done = new Set(context.progress.steps.filter((r) => r.partId === plan.partId).map((r) => r.stepId));
  return dependencyOrder(plan.steps).find((step) => !done.has(step.id));
}

async function* runPart(context: SolveContext, part: MetaPlanPart, lock: VerificationLock): Step<void> {
  const { progress } = context;
  if (progress.partsFailed.includes(part.id) || progress.metaPlan === null) return;
  let plan = progress.partPlans[part.id];
  if (plan === undefined) {
    const planned = yield* partPlanPass(context, progress.metaPlan, part);
    if (!planned.ok) {
      progress.partsFailed.push(part.id);
      yield { type: 'warning', stage: 'PART_PLAN', message: `Part ${part.id} was not planned: ${planned.reason}` };
      yield* checkpoint(context, 'PART_PLAN', subject('plan', `part ${part.id} could not be planned`));
      return;
    }
    plan = planned.value;
    progress.partPlans[part.id] = plan;
    yield* checkpoint(context, 'PART_PLAN', subject('plan', `part ${part.id}: ${plan.taskSummary}`));
  }
  const maxSteps = context.policy.maxStepsPerPart ?? DEFAULT_MAX_STEPS_PER_PART;
  for (let step = nextStep(context, plan); step !== undefined; step = nextStep(context, plan)) {
    const outcome = yield* implementStep(context, step, plan, lock);
    progress.steps.push(outcome.record);
    const records = progress.steps.filter((record) => record.partId === part.id);
    const adjusted = yield* adjustmentPass(context, plan, records, outcome.testSummary);
    if (adjusted.ok) {
      const ran = new Set(records.map((record) => record.stepId));
      const steps: PlanStep[] = [...plan.steps.filter((s) => ran.has(s.id)), ...adjusted.value.revisedSteps];
      if (steps.length > maxSteps) {
        yield {
          type: 'warning',
          stage: 'ADJUSTMENT',
          message: `The adjustment after ${step.id} would make part ${part.id} ${steps.length} steps, over the limit of ${maxSteps}; the plan is kept.`,
        };
      } else {
        plan = { ...plan, steps };
        progress.partPlans[part.id] = plan;
      }
    } else {
      yield {
        type: 'warning',
        stage: 'ADJUSTMENT',
        message: `No adjustment after ${step.id}; the plan is kept: ${adjusted.reason}`,
      };
    }
    const text =
      outcome.record.outcome === 'done'
        ? subject('feat', `${step.id} ${step.description}`)
        : subject('chore', `step ${step.id} failed; its changes were undone`);
    yield* checkpoint(context, 'IMPLEMENT', text);
  }
}

/**
 * `ratchet solve "<task>"`: the whole orchestration, from `start` (a resumed run's progress, as
 * its last checkpoint kept it) or from nothing.
 */
export async function* runSolve(
  policy: SolvePolicy,
  deps: SolveDependencies,
  start: SolveProgress | null,
  signal?: AbortSignal,
): Step<SolveResult> {
  const context = newContext(policy, deps, start ?? initialProgress('orchestrated'), signal);
  const lock = await deps.verifier.lockVerification();
  if (context.progress.metaPlan === null) {
    const planned = yield* metaPlanPass(context);
    if (!planned.ok) {
      yield { type: 'warning', stage: 'META_PLAN', message: `No plan was made: ${planned.reason}` };
      return yield* finish(context);
    }
    context.progress.metaPlan = planned.value;
    yield* checkpoint(context, 'META_PLAN', subject('plan', planned.value.taskSummary));
  }
  for (const part of dependencyOrder(context.progress.metaPlan?.parts ?? [])) {
    yield* runPart(context, part, lock);
  }
  return yield* finish(context);
}

/** The one step a plan file asks for: its files are the step's targets, their changes its description. */
function stepFromArtifact(artifact: PlanArtifact): PlanStep {
  const files = artifact.affectedFiles.map(
    (file) => `- ${file.path} (${file.role})${file.changes ? `: ${file.changes}` : ''}`,
  );
  return {
    id: 'plan',
    description: `${artifact.taskSummary}\n${files.join('\n')}`,
    targetFiles: artifact.affectedFiles.map((file) => file.path),
    targetSymbols: [],
    dependsOn: [],
  };
}

/**
 * `ratchet solve "<task>" --plan plan.json`: one implement step from a plan made before (seed
 * 004, `run_single_pass`), tested and retried like any step, then one checkpoint.
 */
export async function* runSinglePass(
  policy: SolvePolicy,
  deps: SolveDependencies,
  artifact: PlanArtifact,
  signal?: AbortSignal,
): Step<SolveResult> {
  const context = newContext(policy, deps, initialProgress('single-pass'), signal);
  const lock = await deps.verifier.lockVerification();
  const step = stepFromArtifact(artifact);
  const outcome = yield* implementStep(context, step, null, lock);
  context.progress.steps.push(outcome.record);
  const text =
    outcome.record.outcome === 'done'
      ? subject('feat', artifact.taskSummary)
      : subject('chore', 'the plan failed; its changes were undone');
  yield* checkpoint(context, 'IMPLEMENT', text);
  return yield* finish(context);
}

/**
 * `ratchet plan "<task>"`: the meta-plan pass alone, as the user-facing PlanArtifact. Changes
 * nothing; throws `gate-failed` when no usable plan came back.
 */
export async function* planTask(
  policy: SolvePolicy,
  deps: SolveDependencies,
  signal?: AbortSignal,
): Step<PlanArtifact> {
  const context = newContext(policy, deps, initialProgress('orchestrated'), signal);
  const planned = yield* metaPlanPass(context);
  if (!planned.ok) {
    throw new RatchetError('gate-failed', `No plan was made: ${planned.reason}`, {
      hint: 'See the trace of the run for the answers; a larger model or a more specific task may help.',
    });
  }
  return planArtifactFromMetaPlan(planned.value);
}
