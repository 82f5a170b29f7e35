import { createWriteMatcher } from '../../agent/file-guard.js';
import type { PathPolicy, StageOutcome } from '../../core/agent.js';
import { pipeEvents } from '../../core/event-pipe.js';
import { isRatchetError, RatchetError } from '../../core/errors.js';
import type { EventInput } from '../../core/events.js';
import type { HandoffState, TestCase } from '../../core/handoff.js';
import type { AgentStageName, Phase, StageName } from '../../core/stages.js';
import type { UnsafeEntry } from '../../core/unsafe-entry.js';
import type { TestRunResult } from '../../core/verification.js';
import type { ZodType } from 'zod';
import type { AttemptCounter, PriorAttempts, StoredTestRun, TddDependencies, TddPolicy } from './ports.js';

/** Shared, mutable-by-design state of one workflow execution (one process lifetime). */
export interface TddContext {
  policy: TddPolicy;
  deps: TddDependencies;
  signal: AbortSignal | undefined;
  /** The last test run and the commit it ran on, reused while HEAD has not moved. */
  lastRun: { commit: string; run: StoredTestRun } | undefined;
  /** The PLAN checkpoint of the current cycle (unknown right after a resume). */
  cycleBase: string | undefined;
  /** Files changed since `cycleBase`, for the prompts. */
  cycleFiles: string[];
  /** The newest commit with a handoff note: the start point, then each checkpoint once its note is written. */
  lastCheckpoint: string | undefined;
  /**
   * The working tree is known to equal HEAD: nothing (no agent, no test or check command) ran in
   * it since the last checkpoint, discard or reset. Saves asking git on the common path.
   */
  treeClean: boolean;
  /**
   * Attempts made before this process since the checkpoint it resumed from (see `PriorAttempts`):
   * the stages up to the next checkpoint continue from them. Emptied by `checkpoint`.
   */
  priorAttempts: readonly PriorAttempts[];
}

/** The attempt numbers a stage may use in this process: `first` to `last` (none when `last < first`). */
export interface AttemptRange {
  first: number;
  last: number;
  /** What a process before this one left of the stage (see `PriorAttempts`), if anything. */
  prior: PriorAttempts | undefined;
}

/**
 * The attempts of `stage` in `cycle`: numbered from 1 up to the stage's `maxAttempts`, or, for a
 * stage a killed or interrupted process had started, on from the numbers it used, as many more
 * as its limit leaves once its rejected attempts are counted (one cut short is not).
 */
export function attemptRange(
  context: TddContext,
  stage: AttemptCounter,
  cycle: number,
  maxAttempts: number,
): AttemptRange {
  const prior = context.priorAttempts.find((entry) => entry.stage === stage && entry.cycle === cycle);
  const before = prior?.last ?? 0;
  return { first: before + 1, last: before + Math.max(0, maxAttempts - (prior?.rejections.length ?? 0)), prior };
}

/** Refreshes `cycleFiles` (for the GREEN, FIX and REFACTOR prompts). */
export async function refreshCycleFiles(context: TddContext): Promise<void> {
  if (context.cycleBase === undefined) return;
  const files = await context.deps.workspace.changedFilesSince(context.cycleBase);
  context.cycleFiles = files.filter((file) => file !== 'test-list.md');
}

export type Step<T> = AsyncGenerator<EventInput, T>;

export interface AgentStageInput<T> {
  stage: AgentStageName;
  phase: Phase;
  cycle: number;
  attempt: number;
  variables: Record<string, string | number>;
  paths: PathPolicy;
  outputSchema?: ZodType<T>;
  /** The highest attempt number the stage may reach (default: its `maxAttempts`; more after a resume). */
  lastAttempt?: number;
}

/**
 * Runs one agent stage and yields its events. Commits are the orchestrator's job: if the agent
 * committed anyway (through Bash), its commits are undone and their changes kept, so the gate
 * still sees them and the checkpoint remains ours. Files the stage's path policy does not let
 * it write, but which it changed anyway (through its shell, or in a runtime that does not go
 * through our file guard, such as the Claude Code CLI), are put back as they were before the
 * stage and the outcome becomes `path-violation`, which each stage rejects like any other agent
 * failure: whatever the runtime, nothing outside a stage's policy is ever accepted. So does a
 * stage that left a symbolic link leading outside the worktree, a nested repository or a gitlink
 * (see `removeUnsafeEntries`). A runtime that guards its writes (the built-in tools) and ran no
 * Bash needs none of these checks.
 */
export async function* runAgentStage<T>(context: TddContext, input: AgentStageInput<T>): Step<StageOutcome<T>> {
  const { deps, policy } = context;
  const settings = policy.stage(input.stage);
  const rendered = deps.prompt(input.stage, {
    ...input.variables,
    attempt: input.attempt,
    max_attempts: input.lastAttempt ?? settings.maxAttempts,
  });
  const before = await deps.workspace.head();
  const mayWrite = createWriteMatcher(input.paths);
  const protectedBefore = context.treeClean
    ? new Map<string, string | null>()
    : await protectedChanges(context, before, mayWrite);
  context.treeClean = false;
  const runtime = deps.agentFor(input.stage);
  const timer = AbortSignal.timeout(settings.timeoutMs);
  // Whether anything may have gone around the file guard: a shell, a runtime of its own tools,
  // or a stage stopped half-way.
  let unguarded = runtime.guardsWrites !== true;
  let outcome: StageOutcome<T>;
  try {
    outcome = yield* pipeEvents((emit) =>
      runtime.runStage<T>({
        stage: input.stage,
        worktree: deps.workspace.root,
        systemPrompt: rendered.system,
        prompt: rendered.user,
        paths: input.paths,
        maxTurns: settings.maxTurns,
        bashTimeoutMs: policy.bashTimeoutMs,
        ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
        signal: context.signal ? AbortSignal.any([context.signal, timer]) : timer,
        emit: (event) => {
          if (event.type === 'tool-call' && event.tool === 'Bash') unguarded = true;
          emit(event);
        },
      }),
    );
  } catch (error) {
    unguarded = true;
    // Over the stage's time limit (ours, or the runtime's own): a rejected attempt, not a failed run.
    const overTime = (timer.aborted && context.signal?.aborted !== true) || isRatchetError(error, 'timeout');
    if (!overTime) throw error;
    outcome = {
      status: 'timeout',
      finalText: '',
      output: undefined,
      turns: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: null,
      message: `${input.stage} did not finish within its time limit of ${seconds(settings.timeoutMs)} s and was stopped. Work in smaller steps.`,
    };
  }
  if (!unguarded) return outcome;
  deps.workspace.refresh();
  const after = await deps.workspace.head();
  if (after !== before) {
    await deps.workspace.uncommitTo(before);
    yield {
      type: 'warning',
      stage: input.stage,
      message: 'The agent committed by itself; its commits were undone (the orchestrator commits).',
    };
  }
  // Unsafe entries first: nothing below is read or restored through a planted link. What changed
  // is read once for both checks (each git process costs the coordinator milliseconds, and a
  // pool runs many stages at once), and again only when taking unsafe entries out changed it.
  const changed = await deps.workspace.changedFilesSince(before);
  const unsafe = await removeUnsafeEntries(context, before, changed);
  const restored = await restoreProtected(
    context,
    before,
    mayWrite,
    protectedBefore,
    unsafe.length === 0 ? changed : undefined,
  );
  if (restored.length === 0 && unsafe.length === 0) return outcome;
  const pathsOf = (kind: UnsafeEntry['kind']): string =>
    unsafe
      .filter((entry) => entry.kind === kind)
      .map((entry) => entry.path)
      .join(', ');
  const links = pathsOf('link-outside');
  const repositories = pathsOf('nested-repository');
  const gitlinks = pathsOf('gitlink');
  const except = input.paths.denyWrite.length > 0 ? `, except ${input.paths.denyWrite.join(', ')}` : '';
  const problems = [
    ...(restored.length > 0
      ? [
          `${input.stage} may not change ${restored.join(', ')} (writable: ${input.paths.write.join(', ') || 'nothing'}${except}). Those changes were undone; leave these files as they are.`,
        ]
      : []),
    ...(links !== ''
      ? [
          `Symbolic links that lead outside the repository are not allowed: ${links} (removed). Make regular files instead.`,
        ]
      : []),
    ...(repositories !== ''
      ? [
          `Nested git repositories are not allowed: ${repositories} (removed). Do not run git init or git clone inside the repository; write plain files.`,
        ]
      : []),
    ...(gitlinks !== ''
      ? [
          `Gitlinks (submodule entries) are not allowed: ${gitlinks} (unstaged). Do not git add another repository; the orchestrator stages and commits.`,
        ]
      : []),
  ];
  return {
    status: 'path-violation',
    finalText: outcome.finalText,
    output: undefined,
    turns: outcome.turns,
    usage: outcome.usage,
    costUsd: outcome.costUsd,
    message: problems.join(' '),
  };
}

/**
 * Takes out what a stage made (through its shell, or a runtime with tools of its own) that no
 * checkpoint may hold: symbolic links whose resolution leaves the worktree (committed and merged,
 * they would point anywhere on the user's machine), nested repositories and gitlinks (Ratchet's
 * own git would run their programs, and `accept` would bring them into the user's branch). What
 * a link's path held at the stage's start comes back. Returns what was taken out.
 */
async function removeUnsafeEntries(
  context: TddContext,
  head: string,
  changed: readonly string[],
): Promise<UnsafeEntry[]> {
  const { workspace } = context.deps;
  const unsafe = await workspace.unsafeEntries(changed);
  if (unsafe.length > 0) await workspace.removeUnsafeEntries(unsafe, head);
  return unsafe;
}

function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000));
}

/** Uncommitted changes, before a stage, to files the stage may not write: their content then. */
async function protectedChanges(
  context: TddContext,
  head: string,
  mayWrite: (path: string) => boolean,
): Promise<Map<string, string | null>> {
  const { workspace } = context.deps;
  const changed = (await workspace.changedFilesSince(head)).filter((path) => !mayWrite(path));
  return new Map(await Promise.all(changed.map(async (path) => [path, await workspace.readFile(path)] as const)));
}

/**
 * Puts back what a stage changed outside its policy; returns the paths restored. `changed`: the
 * paths changed since `head` when the caller read them after the stage and nothing changed since.
 */
async function restoreProtected(
  context: TddContext,
  head: string,
  mayWrite: (path: string) => boolean,
  before: Map<string, string | null>,
  changed?: readonly string[],
): Promise<string[]> {
  const { workspace } = context.deps;
  const candidates = new Set([
    ...(changed ?? (await workspace.changedFilesSince(head))).filter((path) => !mayWrite(path)),
    ...before.keys(),
  ]);
  const restored: string[] = [];
  for (const path of [...candidates].sort()) {
    const was = before.has(path) ? (before.get(path) ?? null) : await workspace.readFileAt(head, path);
    if ((await workspace.readFile(path)) === was) continue;
    if (was === null) await workspace.removeFile(path);
    else await workspace.writeFile(path, was);
    restored.push(path);
  }
  return restored;
}

/** Runs the suite unless the last run was on the same clean commit. */
export async function* runSuite(
  context: TddContext,
  stage: StageName,
  options: { reuse: boolean; baseline?: boolean },
): Step<StoredTestRun> {
  const { workspace, verifier } = context.deps;
  const head = await workspace.head();
  if (options.reuse && context.lastRun?.commit === head && (context.treeClean || !(await workspace.hasChanges())))
    return context.lastRun.run;
  context.treeClean = false;
  const run = await verifier.runTests(stage, context.signal);
  yield {
    type: 'verify-end',
    stage,
    kind: options.baseline ? 'baseline' : 'test',
    result: run.result,
    outputFile: run.outputFile,
  };
  return run;
}

/**
 * A cycle starts from a passing suite: GREEN must make every test pass, so a test that already
 * fails (or a file that cannot load) would fail the cycle whatever the model did. The run
 * stops before any model call of the cycle (PLAN checks, and RED again for a resumed run),
 * naming those tests: they are fixed on the user's branch, and a new run starts from there.
 */
export function requireGreenBaseline(result: TestRunResult, phase: Phase): void {
  const { problem } = result;
  if (problem !== undefined) {
    // No gate could judge a model's work on these results: stop before spending anything.
    throw new RatchetError(
      problem.kind === 'unreadable' ? 'config' : 'gate-failed',
      `Ratchet cannot use the results of \`${result.command}\`: ${problem.message}`,
      {
        hint:
          problem.hint ??
          'Set [test] command = "..." in .ratchet/config.toml to a command whose results Ratchet reads.',
        details: { phase, reason: problem.kind === 'unreadable' ? 'results-unreadable' : 'results-inconsistent' },
      },
    );
  }
  const failing = result.tests.filter((test) => test.status === 'failed').map((test) => test.id);
  const broken = [...failing, ...result.collectionErrors.map((error) => error.split('\n')[0] ?? error)];
  if (broken.length === 0 && !result.timedOut) return;
  const shown = broken.slice(0, 5).join('; ') + (broken.length > 5 ? `; and ${broken.length - 5} more` : '');
  throw new RatchetError(
    'gate-failed',
    `The test suite fails before any change of this cycle: ${result.timedOut ? 'it timed out' : shown}.`,
    {
      hint: `Ratchet builds on a passing suite (\`${result.command}\`): fix or skip these tests on your branch, then start a new run (\`ratchet reject\` drops this one).`,
      details: { phase, reason: 'red-baseline' },
    },
  );
}

export function stageStart(stage: StageName, phase: Phase, cycle: number, attempt: number): EventInput {
  return { type: 'stage-start', stage, phase, cycle, attempt };
}

export function stageEnd(
  stage: StageName,
  phase: Phase,
  cycle: number,
  attempt: number,
  outcome: 'accepted' | 'rejected' | 'error' | 'skipped',
  reason?: string,
  subjects: readonly string[] = [],
): EventInput {
  return {
    type: 'stage-end',
    stage,
    phase,
    cycle,
    attempt,
    outcome,
    ...(reason === undefined ? {} : { reason }),
    ...(subjects.length === 0 ? {} : { subjects: [...subjects] }),
  };
}

/** Commits and writes the handoff note on the new commit; yields both events. */
export async function* checkpoint(
  context: TddContext,
  stage: StageName,
  subject: string,
  state: HandoffState,
  options: { allowEmpty?: boolean } = {},
): Step<string> {
  const { workspace } = context.deps;
  const commit = await workspace.checkpoint(subject, { ...options, note: state });
  context.lastCheckpoint = commit;
  context.treeClean = true;
  context.priorAttempts = [];
  yield { type: 'checkpoint-create', stage, phase: state.phase, commit, subject };
  yield { type: 'note-write', commit, state };
  return commit;
}

export function describeTest(test: TestCase | null): string {
  return test === null ? '(none)' : `${test.description} (test: ${test.testFile}, implementation: ${test.implFile})`;
}

/** The subject line of a commit for a test: one line, at most ~72 characters. */
export function subjectFor(prefix: string, text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const max = 72 - prefix.length - 2;
  return `${prefix}: ${line.length > max ? `${line.slice(0, max - 1)}…` : line}`;
}

export function outcomeProblem(outcome: StageOutcome<unknown>): string | null {
  return outcome.status === 'completed' ? null : outcome.message;
}
