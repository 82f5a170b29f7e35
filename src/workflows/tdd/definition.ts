import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import type { HandoffState } from '../../core/handoff.js';
import { stageSettings } from '../../config/resolved.js';
import { loadPrompts, packageRoot, renderTemplate, stagePrompt } from '../../config/prompts.js';
import { Git } from '../../git/git.js';
import { checkNeedsRefactor } from '../../code/size-check.js';
import { detectTestCommand, FRAMEWORKS, type Framework } from '../../verify/detect.js';
import { requireReadableResults } from '../../verify/run-tests.js';
import type { RunContext, RunStart, Steps, WorkflowDefinition } from '../definition.js';
import { createGitWorkspace } from './git-workspace.js';
import type { PriorAttempts, TddDependencies, TddPolicy } from './ports.js';
import { findResumePoint, priorAttempts } from './resume-point.js';
import {
  createStaticTestReview,
  createTestReviewBreaker,
  recordedReviews,
  replayReviews,
  type RecordedReview,
  type TestReviewBreaker,
} from './test-review.js';
import { createVerifierPort } from './verifier-port.js';
import { initialHandoff, runTdd, type TddResult } from './workflow.js';

/** What starts a TDD run. */
export interface TddRequest {
  /** The feature to build, in plain words. */
  feature: string;
}

/**
 * What a TDD run stores: the test command and framework it started with (a resumed run detects
 * them again in its worktree, the configured command first) and its refactor mode (kept on
 * resume, as the run was started).
 */
const TddSettingsSchema = z.object({
  testCommand: z.string().optional(),
  framework: z.enum(FRAMEWORKS).optional(),
  refactor: z.enum(['always', 'when-needed', 'never']).optional(),
});

type TddSettings = z.infer<typeof TddSettingsSchema>;

/**
 * Where a resumed TDD run continues: the note of its checkpoint, what earlier processes left of
 * its stages, and the reviews of its tests they recorded (the review's circuit breaker starts
 * from them, so a review that kept failing is not called `limit` more times after each resume).
 */
interface TddState {
  handoff: HandoffState | null;
  priorAttempts: PriorAttempts[];
  reviews: RecordedReview[];
}

interface TddTypes {
  request: TddRequest;
  checked: { testCommand: string; framework: Framework };
  settings: TddSettings;
  prepared: undefined;
  state: TddState;
  result: TddResult;
}

/**
 * The TDD loop of seed 003 (PLAN -> RED -> GREEN -> REFACTOR over `test-list.md`, hardened by
 * seed 000's gates), as a workflow of the engine: its stages live in `workflow.ts` and its
 * `*-stage.ts` files, over the ports of `ports.ts`; this file checks a new run, says what the
 * run stores, builds the ports over the run's worktree, sandbox and agents, and finds where a
 * stopped run continues (its handoff notes in git).
 */
export const tddWorkflow: WorkflowDefinition<TddTypes> = {
  name: 'tdd',
  startCommand: 'ratchet tdd "<feature>"',
  settings: TddSettingsSchema,
  plainDirectories: false,
  checkLoginFirst: false,
  feature: (request) => request.feature,
  async check(request, { repoRoot, config }) {
    if (request.feature.trim() === '') {
      throw new RatchetError('usage', 'The feature to build is empty.', {
        hint: 'Describe it in plain words, e.g. ratchet tdd "Add a stack with push, pop and peek".',
      });
    }
    const detected = await detectTestCommand(repoRoot, config.test.command);
    // A test command whose per-test results surely cannot be read would leave every gate blind.
    await requireReadableResults({ command: detected.command, framework: detected.framework, cwd: repoRoot });
    return { checked: { testCommand: detected.command, framework: detected.framework } };
  },
  // A `.ratchet/prompts.toml` that does not parse or renames a stage is refused before the run is touched.
  async preflight({ repoRoot }) {
    await loadPrompts({ packageRoot: packageRoot(), repoRoot });
  },
  settle: (checked, { config }) =>
    Promise.resolve({ settings: { ...checked, refactor: config.tdd.refactor }, events: [] }),
  run: runTddSteps,
  progress: { kind: 'handoff-notes' },
  resume: {
    point: ({ git, run, ledger }) => findResumePoint(git, run, ledger),
    async state({ run, ledger }, point) {
      return {
        handoff: point.note,
        priorAttempts: await priorAttempts(ledger, run, point.commit),
        reviews: await recordedReviews(ledger, run.id),
      };
    },
  },
};

/** The loop over the run's ports, from the start or from the checkpoint a resumed run continues at. */
async function* runTddSteps(context: RunContext<TddSettings>, from: RunStart<TddTypes>): Steps<TddResult> {
  const { run, settings, config } = context;
  const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot: run.repoRoot });
  const test =
    from.kind === 'start' && settings.testCommand !== undefined && settings.framework !== undefined
      ? { command: settings.testCommand, framework: settings.framework }
      : await detectTestCommand(run.worktree, config.test.command ?? settings.testCommand);
  const deps: TddDependencies = {
    workspace: createGitWorkspace(run.worktree, new Git(run.worktree), context.redact.commits),
    verifier: createVerifierPort({
      worktree: run.worktree,
      repoRoot: run.repoRoot,
      outputDir: join(context.runDir, 'verify'),
      command: test.command,
      framework: test.framework,
      config,
      // The tests run what the agent wrote: in the same sandbox as its shell.
      runner: context.commands.runner,
      environment: context.commands.environment,
      redact: context.redact.stored,
    }),
    agentFor: (stage) => context.agents.forStage(stage),
    prompt(stage, variables) {
      const template = stagePrompt(prompts, stage);
      return { system: renderTemplate(template.system, variables), user: renderTemplate(template.user, variables) };
    },
    async refactorCheck(files) {
      const check = await checkNeedsRefactor(files, run.worktree, config.refactorCheck);
      return { needsRefactor: check.needsRefactor, reasons: check.reasons };
    },
    ...(config.tdd.reviewTests ? { testReview: createStaticTestReview(reviewBreaker(config, from)) } : {}),
  };
  const policy: TddPolicy = {
    feature: run.feature,
    refactor: settings.refactor ?? config.tdd.refactor,
    testGlobs: config.test.patterns,
    bashTimeoutMs: config.bash.timeoutMs,
    runId: run.id,
    baseCommit: run.baseCommit,
    stage: (stage) => {
      const limits = stageSettings(config, stage);
      return { maxAttempts: limits.maxAttempts, maxTurns: limits.maxTurns, timeoutMs: limits.timeoutMs };
    },
  };
  if (from.kind === 'start') return yield* runTdd(policy, deps, initialHandoff(run.id), context.signal);
  const start = from.state.handoff ?? initialHandoff(run.id);
  return yield* runTdd(policy, deps, start, context.signal, { priorAttempts: from.state.priorAttempts });
}

/** The review's circuit breaker: a resumed run's counts what the review did before the stop (it may be open already). */
function reviewBreaker(config: RunContext<TddSettings>['config'], from: RunStart<TddTypes>): TestReviewBreaker {
  const breaker = createTestReviewBreaker(config.tdd.reviewFailureLimit);
  if (from.kind === 'resume') replayReviews(breaker, from.state.reviews);
  return breaker;
}
