import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import type { AgentStageName } from '../../core/stages.js';
import { stageSettings, type ResolvedConfig } from '../../config/resolved.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { Git } from '../../git/git.js';
import { buildIndex } from '../../code/index/build-index.js';
import type { CodeIndex } from '../../code/index/types.js';
import type { RetrievalStage } from '../../context/context-package.js';
import type { TokenBudget } from '../../context/prompt-budget.js';
import { contextWindowFor } from '../../llm/context-windows.js';
import { maxOutputTokensFor } from '../../llm/model-limits.js';
import { detectTestCommand, FRAMEWORKS, type Framework } from '../../verify/detect.js';
import type { RunContext, RunStart, Steps, WorkflowDefinition } from '../definition.js';
import { createVerifierPort } from '../tdd/verifier-port.js';
import { createSolveGitWorkspace } from './git-workspace.js';
import type { SolveDependencies, SolveModels, SolvePolicy } from './ports.js';
import type { SolveProgress } from './progress.js';
import { solvePrompts, type SolvePromptStage } from './prompts.js';
import { findSolveResumePoint, solveStateAt } from './resume-point.js';
import { parsePlanArtifact } from './parse-plan.js';
import { PlanArtifactSchema, type PlanArtifact } from './schemas.js';
import { runSinglePass, runSolve, type SolveResult } from './workflow.js';

/** What starts a solve run. */
export interface SolveRequest {
  task: string;
  /** `--stages`; null: `[solve] stages`. */
  stages: RetrievalStage[] | null;
  /** `--plan plan.json`, read and checked: one pass from it instead of the orchestration. */
  plan: PlanArtifact | null;
}

/**
 * What a solve run stores: the test command it verifies with, the retrieval stages, and the plan
 * it executes when it was started from one (a resumed run keeps all three as started).
 */
const SolveSettingsSchema = z.object({
  testCommand: z.string().optional(),
  framework: z.enum(FRAMEWORKS).optional(),
  stages: z.array(z.enum(['scope', 'precision'])).optional(),
  plan: PlanArtifactSchema.nullable().optional(),
});
type SolveSettings = z.infer<typeof SolveSettingsSchema>;

const SolveResultStatusSchema = z.object({ status: z.enum(['complete', 'partial', 'failed']) });

/** The status of a solve run's result as the engine hands it back (`RunOutcome.result`, untyped there); null when it has none. */
export function solveStatusOf(result: unknown): SolveResult['status'] | null {
  return SolveResultStatusSchema.safeParse(result).data?.status ?? null;
}

interface SolveTypes {
  request: SolveRequest;
  checked: { testCommand: string; framework: Framework; stages: RetrievalStage[]; plan: PlanArtifact | null };
  settings: SolveSettings;
  prepared: undefined;
  /** The progress its last checkpoint kept (null: none yet, the run starts over from its base). */
  state: SolveProgress | null;
  result: SolveResult;
}

/**
 * The model settings each pass uses: the planning passes (and precision grading) are the
 * planner's, `[stages.plan]`; the implement pass writes code, `[stages.green]` (seed 004's
 * reasoning and coding models).
 */
function agentStageOf(stage: SolvePromptStage): AgentStageName {
  return stage === 'IMPLEMENT' ? 'GREEN' : 'PLAN';
}

/**
 * The budget of a pass: the model's window minus `[budget] reserved_tokens`, the reserve capped
 * at half the window (Ollama's default window is 4096, the reserve's default too: the prompt
 * would get nothing).
 */
function solveBudget(config: ResolvedConfig, stage: SolvePromptStage): TokenBudget {
  const model = stageSettings(config, agentStageOf(stage)).model;
  const contextWindow = contextWindowFor(config.provider.name, model, config.budget.contextWindow);
  return { contextWindow, reservedTokens: Math.min(config.budget.reservedTokens, Math.floor(contextWindow / 2)) };
}

/** The models of a solve run over the engine's agents, with each pass's budget. */
function solveModels(context: RunContext<SolveSettings>): SolveModels {
  const { config } = context;
  return {
    client: (stage, emit) => context.agents.modelFor(agentStageOf(stage), emit),
    budget: (stage) => solveBudget(config, stage),
    maxOutputTokens(stage) {
      const settings = stageSettings(config, agentStageOf(stage));
      // The reply must fit what the budget kept free for it.
      return Math.min(
        maxOutputTokensFor(settings.model, settings.maxOutputTokens),
        solveBudget(config, stage).reservedTokens,
      );
    },
  };
}

/** The worktree's code index, rebuilt before each pass from the cache (only changed files are parsed again). */
function indexOf(context: RunContext<SolveSettings>): () => Promise<CodeIndex> {
  const { run, config } = context;
  let previous: CodeIndex | undefined;
  return async () => {
    previous = await buildIndex({
      root: run.worktree,
      cacheDir: join(run.repoRoot, '.ratchet', 'index'),
      excludes: config.refactor.scopeExcludes,
      git: new Git(run.worktree),
      ...(previous ? { previous } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    });
    return previous;
  };
}

/** Everything `runSolve` needs, over the run's worktree, sandbox and models. */
export async function solveDependencies(
  context: RunContext<SolveSettings>,
  test: { command: string; framework: Framework },
): Promise<SolveDependencies> {
  const { run, config } = context;
  const prompts = solvePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot: run.repoRoot }));
  return {
    workspace: createSolveGitWorkspace(run.worktree, new Git(run.worktree)),
    verifier: createVerifierPort({
      worktree: run.worktree,
      repoRoot: run.repoRoot,
      outputDir: join(context.runDir, 'verify'),
      command: test.command,
      framework: test.framework,
      config,
      // The tests run what the model wrote: in the run's sandbox.
      runner: context.commands.runner,
      environment: context.commands.environment,
      redact: context.redact.stored,
    }),
    models: solveModels(context),
    prompts,
    index: indexOf(context),
  };
}

function policyOf(context: RunContext<SolveSettings>): SolvePolicy {
  const { run, settings, config } = context;
  return {
    task: run.feature,
    runId: run.id,
    baseCommit: run.baseCommit,
    stages: settings.stages ?? config.solve.stages,
    maxRetriesPerStep: config.solve.maxRetriesPerStep,
    maxFullFiles: config.solve.maxFullFiles,
    context: config.solve.context,
  };
}

/** The checks `ratchet plan` shares with `solve`: a task, a model API provider, the prompts. */
export function checkTask(task: string, config: ResolvedConfig): void {
  if (task.trim() === '') {
    throw new RatchetError('usage', 'The task is empty.', {
      hint: 'Describe it in plain words, e.g. ratchet solve "fix the rounding in total() and add median()".',
    });
  }
  if (config.provider.name === 'claude-code') {
    throw new RatchetError(
      'usage',
      'plan and solve call the model directly; claude-code is an agent runtime, not a model API.',
      {
        hint: 'Use --provider anthropic (the same models), openai, openai-compatible, ollama or replay.',
      },
    );
  }
}

/** Reads and checks a plan file (`ratchet plan --output`'s PlanArtifact); throws `usage` naming what is wrong. */
export function readPlanArtifact(text: string, file: string): PlanArtifact {
  const parsed = parsePlanArtifact(text);
  if (!parsed.ok) {
    throw new RatchetError('usage', `${file} is not a plan: ${parsed.problem}`, {
      hint: 'Write it with ratchet plan "<task>" --output plan.json.',
    });
  }
  return parsed.value;
}

/**
 * The plan / solve agent of seed 004 as a workflow of the engine: META_PLAN splits the task into
 * parts, PART_PLAN a part into steps, IMPLEMENT answers each step with search/replace edits
 * (applied all or none, then the project's tests, a failed attempt retried with its failure),
 * ADJUSTMENT revises the remaining steps after every step; each step is a checkpoint whose note
 * keeps the progress, where a resumed run continues. With a plan file, one IMPLEMENT step.
 */
export const solveWorkflow: WorkflowDefinition<SolveTypes> = {
  name: 'solve',
  startCommand: 'ratchet solve "<task>"',
  settings: SolveSettingsSchema,
  modelStages: ['plan', 'green'],
  plainDirectories: false,
  checkLoginFirst: false,
  feature: (request) => request.task,
  async check(request, { repoRoot, config }) {
    checkTask(request.task, config);
    const detected = await detectTestCommand(repoRoot, config.test.command);
    return {
      checked: {
        testCommand: detected.command,
        framework: detected.framework,
        stages: request.stages ?? config.solve.stages,
        plan: request.plan,
      },
    };
  },
  // A `.ratchet/prompts.toml` that does not parse or renames a pass's stage is refused before the run is touched.
  async preflight({ repoRoot }) {
    solvePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot }));
  },
  settle: (checked) => Promise.resolve({ settings: checked, events: [] }),
  run: runSolveSteps,
  progress: {
    kind: 'own',
    // Solve checkpoints keep their progress in their own notes; the ledger has it too.
    async lines(run, ledger) {
      const { progress } = await ledger.solveTrace(run.id);
      return [
        [
          'steps',
          progress === null
            ? 'no plan yet'
            : `${progress.stepsCompleted} done, ${progress.stepsFailed} failed, of ${progress.totalSteps} planned in ${progress.totalParts} parts (${progress.mode}, ${progress.status}); the trace: ratchet report ${run.id} --trace`,
        ],
      ];
    },
  },
  resume: {
    point: ({ git, run }) => findSolveResumePoint(git, run),
    state: ({ git }, point) => solveStateAt(git, point.commit),
  },
};

async function* runSolveSteps(context: RunContext<SolveSettings>, from: RunStart<SolveTypes>): Steps<SolveResult> {
  const { settings, config, run } = context;
  const test =
    settings.testCommand !== undefined && settings.framework !== undefined
      ? { command: settings.testCommand, framework: settings.framework }
      : await detectTestCommand(run.worktree, config.test.command);
  const deps = await solveDependencies(context, test);
  const policy = policyOf(context);
  const plan = settings.plan ?? null;
  const start = from.kind === 'resume' ? from.state : null;
  if (plan !== null) {
    // A single pass is one checkpoint: resumed before it, it runs again; after it, it is done.
    if (start !== null)
      return { status: start.steps.some((s) => s.outcome === 'done') ? 'complete' : 'failed', progress: start };
    return yield* runSinglePass(policy, deps, plan, context.signal);
  }
  return yield* runSolve(policy, deps, start, context.signal);
}
