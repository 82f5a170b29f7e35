/**
 * The contract between a workflow and the engine. A workflow is one folder under
 * `src/workflows/<name>/` exporting one `WorkflowDefinition`: the zod schema of the settings its
 * runs store, the checks and settings of a new run, its steps as async generators of events over
 * ports, how a run of it finds where to resume, and what the CLI and the reports say about it.
 * The engine (`src/engine/`) runs every definition through one lifecycle: preflight, branch and
 * worktree, ledger row, sandbox, the steps through one recording seam, stop and kill recovery,
 * resume, accept / reject / rollback. A workflow never imports the engine or the CLI.
 */
import type { z } from 'zod';
import type { AgentRuntime } from '../core/agent.js';
import type { Clock } from '../core/effects.js';
import type { ModelClient } from '../core/model.js';
import type { EventInput } from '../core/events.js';
import type { HandoffState } from '../core/handoff.js';
import type { Redactor } from '../core/redact.js';
import type { AgentStageName, StageName, StagePhase } from '../core/stages.js';
import type { TaskDefinition } from '../core/tasks.js';
import type { ResolvedConfig } from '../config/resolved.js';
import type { StageKey } from '../config/schema.js';
import type { Git } from '../git/git.js';
import type { ProcessRunner } from '../process/types.js';
import type { Framework } from '../verify/detect.js';
import type { CliTools } from '../agent/models/run-models.js';
import type { Ledger } from '../ledger/types.js';
import type { StoredTestRun } from './tdd/ports.js';
import type { RecordedReview } from './tdd/test-review.js';

/** Steps of a workflow: they yield events (the engine records them) and return `T`. */
export type Steps<T> = AsyncGenerator<EventInput, T>;

/**
 * The types of one workflow: what starts a run (`request`), what its checks found (`checked`),
 * what its runs store (`settings`), what its preparing steps hand to the others (`prepared`),
 * where a resumed run continues (`state`) and what its steps return (`result`).
 */
export interface WorkflowTypes {
  request: unknown;
  checked: unknown;
  settings: unknown;
  prepared: unknown;
  state: unknown;
  result: unknown;
}

/** The run as its workflow sees it. */
export interface RunInfo {
  id: string;
  /** The git repository the run lives in: the user's, or a copy of a directory that is not one. */
  repoRoot: string;
  /** The directory the user named: `repoRoot`, or the directory `repoRoot` is a copy of. */
  target: string;
  /** Whether `target` is a git repository (false: the run works in a copy of it). */
  isGit: boolean;
  /** Absolute paths the run's sandbox never shows, besides the checkout and `$RATCHET_HOME` (`StartOptions.hidden`). */
  hidden: readonly string[];
  worktree: string;
  branch: string;
  baseBranch: string | null;
  baseCommit: string;
  /** The feature, task or goal, as the run's `feature` says. */
  feature: string;
}

/** What a workflow's checks get: nothing in them may write anything. */
export interface CheckContext {
  /** The git repository the run will live in. */
  repoRoot: string;
  git: Git;
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  runner: ProcessRunner;
}

/** What a workflow's checks found: the workflow's own result, and the configuration, refined. */
export interface Checked<T> {
  checked: T;
  /** The configuration with what the workflow reads beside it folded in (e.g. `.refactor-bot.config.json`). */
  config?: ResolvedConfig;
}

/** What settles a new run's settings: the branch and worktree exist, the run is not recorded yet. */
export interface SettleContext {
  run: Omit<RunInfo, 'feature'>;
  config: ResolvedConfig;
  /** `$RATCHET_HOME`, where backups and worktrees live. */
  home: string;
  runner: ProcessRunner;
}

/** The agent runtimes of the run's process, one per stage (see `RunAgents` in `agent/models/`). */
export interface AgentPort {
  /** The runtime of a stage: its model and limits (`[stages.<name>]`); `tools` narrows a CLI runtime's tools. */
  forStage(stage: AgentStageName, tools?: CliTools): AgentRuntime;
  /**
   * The plain model client of a stage's model (`[stages.<name>] model`), retries included, for a
   * workflow that makes its own calls without tools (solve); retried failures go to `emit`.
   * Throws `config` for `--provider claude-code`.
   */
  modelFor(stage: AgentStageName, emit: (event: EventInput) => void): ModelClient;
}

/**
 * A task's own place to work in a tasks run: a worktree on a branch of its own (made from
 * `startPoint`), with a sandbox of its own around that worktree and agents confined to it.
 * Disposing of it removes the worktree and the sandbox; the branch stays (the run merges it).
 */
export interface TaskSpace extends AsyncDisposable {
  worktree: string;
  branch: string;
  /** The commit its worktree starts at: the start point, or the branch's head when an earlier process left one. */
  head: string;
  commands: { runner: ProcessRunner; environment: Readonly<Record<string, string>> };
  agents: AgentPort;
  /**
   * The sandbox's warnings since the last call (a shared dependency folder the task's agent or
   * code replaced, restored before a command), for the task's steps to show and record.
   */
  takeNotices(): string[];
  /** Puts back a shared dependency folder the task's agent left swapped (its notice comes from `takeNotices`). */
  restoreShared(): Promise<void>;
}

/** The local worker pool's places (the engine's): one `TaskSpace` per attempt of a task. */
export interface TaskSpacePort {
  open(request: { key: string; attempt: number; startPoint: string }): Promise<TaskSpace>;
}

/** How one attempt of a task ended where it ran: its branch's last commit, or why it failed. */
export type TaskAttemptOutcome = { status: 'done'; head: string } | { status: 'failed'; reason: string; code: string };

/** What a task attempt run elsewhere needs: everything its pipeline reads, as plain JSON. */
export interface RemoteTaskRequest {
  task: TaskDefinition;
  /** The tasks it depends on (merged into `startPoint` already), for its prompts. */
  dependencies: TaskDefinition[];
  attempt: number;
  /** The run branch's commit the task's branch grows from. */
  startPoint: string;
  settings: { testCommand: string; framework: Framework; refactor: 'always' | 'when-needed' | 'never' };
  /** The run's other tasks: the files they own, which the task's PLAN may not name. */
  others?: TaskDefinition[];
  /** A passing run of the full suite at `startPoint`, when the coordinator has one: PLAN's baseline. */
  baseline?: StoredTestRun;
}

/**
 * Tasks run by workers of a queue (`ratchet tasks run --queue`): the engine publishes the run
 * branch where the workers fetch it, enqueues each attempt, and brings the task's branch back.
 * `run` yields what the worker streams (its stage, model and tool events, tagged with the task)
 * and a `task-update` `running` at each start of the job (a second one: the first worker died),
 * and returns the outcome with the task's branch, now in the run's repository when it is done.
 */
export interface RemoteTaskPort extends AsyncDisposable {
  run(request: RemoteTaskRequest): AsyncGenerator<EventInput, { branch: string; outcome: TaskAttemptOutcome }>;
}

/**
 * The local worker pool of a tasks run as processes of this machine (the engine's, when the CLI
 * runs it): `workers` slots in worker processes, with the run's test reviews so far (their
 * circuit breaker's count); the port runs each attempt on a free slot.
 */
export interface LocalTaskOpener {
  open(options: { workers: number; reviews: readonly RecordedReview[] }): Promise<RemoteTaskPort>;
}

/** Opens the queue a tasks run stored in its settings (the engine's Redis queue). */
export interface RemoteTaskOpener {
  open(queue: { url: string; publish: string | null }): Promise<RemoteTaskPort>;
}

/** What the engine hands a workflow's steps: the run, its settings, and ports over its sandbox and models. */
export interface RunContext<Settings> {
  run: RunInfo;
  settings: Settings;
  config: ResolvedConfig;
  /** Runs what the model wrote (tests, lint, verifiers, formatters): in the run's sandbox unless the user opted out. */
  commands: { runner: ProcessRunner; environment: Readonly<Record<string, string>> };
  agents: AgentPort;
  /** `stored`: what files the run writes may hold (logs, artifacts); `commits`: commit messages and notes (keys only). */
  redact: { stored: Redactor; commits: Redactor };
  clock: Clock;
  /** `.ratchet/runs/<run-id>/` in `run.repoRoot`: logs, artifacts, reports. */
  runDir: string;
  /** Worktrees, sandboxes and agents for the tasks of a run that works on several at once. */
  taskSpaces?: TaskSpacePort;
  /** Worker processes of this machine for a tasks run's tasks (none: they run in this process, on `taskSpaces`). */
  localTasks?: LocalTaskOpener;
  /** Workers of a queue on other machines, for a tasks run started with `--queue`. */
  remoteTasks?: RemoteTaskOpener;
  signal?: AbortSignal;
}

/** Where the steps start: a new run (after its preparing steps), or a resumed one. */
export type RunStart<T extends WorkflowTypes> =
  { kind: 'start'; prepared: T['prepared'] } | { kind: 'resume'; state: T['state'] };

/** A checkpoint whose note is in git: what the engine records when a kill left it out of the ledger. */
export interface NotedCheckpoint {
  sha: string;
  subject: string;
  note: HandoffState;
  /** The stages that make a checkpoint of the note's phase, the phase's own first. */
  stages: readonly StageName[];
}

/**
 * A checkpoint of a workflow that keeps its progress in notes of its own (solve): no handoff note
 * to record, the stage and phase that made it read from its progress.
 */
export interface ProgressCheckpoint {
  sha: string;
  subject: string;
  note: null;
  stage: StageName;
  phase: StagePhase;
}

/** Where a resumed run continues. */
export interface ResumePoint {
  /** The checkpoint (or the run's base commit) the run continues from. */
  commit: string;
  /** Its handoff note; null at the run's base commit. */
  note: HandoffState | null;
  /** Commits after it that never became checkpoints: the engine drops them. */
  dropped: number;
  /**
   * Checkpoints up to `commit` a killed process may have left out of the ledger, oldest first,
   * the one at `commit` last when it is one: the engine records what the ledger lacks of them.
   */
  checkpoints: (NotedCheckpoint | ProgressCheckpoint)[];
}

/** What a workflow's resume gets: the run, its settings, its worktree and its ledger (to read). */
export interface ResumeContext<Settings> {
  run: RunInfo;
  settings: Settings;
  git: Git;
  ledger: Ledger;
}

/** How the runs of a workflow are resumed (a workflow without it has runs that are accepted or dropped, not resumed). */
export interface ResumeSupport<T extends WorkflowTypes> {
  /** Finds where the run continues; refuses (`usage`, with the way out) when it cannot. Changes nothing. */
  point(context: ResumeContext<T['settings']>): Promise<ResumePoint>;
  /** The state the steps continue from, read once the engine recorded what a kill left out of the ledger. */
  state(context: ResumeContext<T['settings']>, point: ResumePoint): Promise<T['state']>;
}

export interface WorkflowDefinition<T extends WorkflowTypes = WorkflowTypes> {
  /** The name its runs are recorded under (`runs.workflow`) and the registry finds it by. */
  readonly name: string;
  /** The command line that starts a run of it, for hints (`ratchet refactor run`). */
  readonly startCommand: string;
  /**
   * The settings its runs store (`runs.config`, beside the engine's `model`, `target` and
   * `isGit`), parsed once where they are read. Every key is optional: a run recorded by an
   * older version still parses.
   */
  readonly settings: z.ZodType<T['settings']>;
  /** The `[stages.<key>]` whose models it uses (for the `--model` warning); every stage when absent. */
  readonly modelStages?: readonly StageKey[];
  /** A directory that is not a git repository is worked on in a git copy of it (else refused). */
  readonly plainDirectories: boolean;
  /** Its first model call comes late (after a baseline, say): check the provider's login first. */
  readonly checkLoginFirst: boolean;
  /** What the run's `feature` says. */
  feature(request: T['request']): string;
  /** Everything a new run can be refused for that the engine does not check; writes nothing. */
  check(request: T['request'], context: CheckContext): Promise<Checked<T['checked']>>;
  /** What every process of a run checks before it touches the run, new or resumed (that its prompts load, say). */
  preflight?(context: { repoRoot: string; config: ResolvedConfig }): Promise<void>;
  /**
   * The branch and worktree exist: the settings the run stores and the events its start says
   * (after `run-start`). A failure drops the worktree and branch; nothing was recorded yet.
   */
  settle(checked: T['checked'], context: SettleContext): Promise<{ settings: T['settings']; events: EventInput[] }>;
  /**
   * Steps that prepare a new run: a failure drops the run (its worktree and branch go, the ledger
   * keeps it as failed); when the caller asks for a confirmation, it comes after them.
   */
  prepare?(context: RunContext<T['settings']>): Steps<T['prepared']>;
  /** The run's steps; a failure stops the run where it is (its checkpoints stay). */
  run(context: RunContext<T['settings']>, from: RunStart<T>): Steps<T['result']>;
  /** How a stopped run continues (`ratchet resume`); without it, a stopped run is accepted (`--force`) or rejected. */
  readonly resume?: ResumeSupport<T>;
  /** How `ratchet status` and `ratchet history` show a run's progress. */
  readonly progress: RunProgress;
  /**
   * Its checkpoints pass a fast verifier, and some the full one too (`checkpoint-verify` events):
   * accepting a run that stopped says which passed only the fast one.
   */
  readonly verifiesCheckpointsTwice?: boolean;
  /** The backup its runs make before they change anything, which `ratchet refactor rollback` restores. */
  readonly backups?: BackupSupport<T['settings']>;
  /**
   * Its runs leave nothing in their worktree once their steps end (they change no file and are not
   * resumed): the engine removes the worktree then, however the run ended, and keeps the branch
   * for `accept` / `reject` (plan). Other runs keep it until accepted, rejected or rolled back.
   */
  readonly releasesWorktree?: boolean;
}

/**
 * Where a run's progress shows: the handoff notes of its checkpoints (phase, cycle, current test),
 * its checkpoints by subject, those whose subject starts with `counted` counted as `noun`
 * (`batches   3 committed`), or lines the workflow makes itself (`own`; its checkpoints are listed
 * by subject in `history` and the reports).
 */
export type RunProgress =
  | { kind: 'handoff-notes' }
  | { kind: 'checkpoints'; noun: string; counted: string }
  | {
      kind: 'own';
      /** The `status` lines (label, text) of the workflow's own, from the ledger and the run's folder. */
      lines(run: { id: string; runDir: string }, ledger: Ledger): Promise<ReadonlyArray<readonly [string, string]>>;
    };

/** A full backup of a directory (seed 002, 8.1), under `$RATCHET_HOME/backups/`. */
export interface RunBackup {
  directory: string;
  /** A git bundle of the repository (null when it had no commit, or is not one). */
  bundle: string | null;
  /** A tar.gz snapshot of the working directory. */
  snapshot: string;
}

/** How the runs of a workflow back up the directory they work on, and restore it. */
export interface BackupSupport<Settings> {
  /** The command that restores a run's backup, for hints (`ratchet refactor rollback`). */
  readonly restoreCommand: string;
  /** The backup a run made (null: none recorded). */
  of(settings: Settings): RunBackup | null;
  /** Backs `directory` up into `into` (a restore keeps the state it replaces this way). */
  create(directory: string, into: string, runner: ProcessRunner, options: { git: boolean }): Promise<RunBackup>;
  /** Puts `directory` back as `backup` holds it; `branch` goes back to its commit then. */
  restore(
    directory: string,
    backup: RunBackup,
    runner: ProcessRunner,
    options: { branch: string | null },
  ): Promise<void>;
}

/** Any workflow, for the registry (its members are methods, so a definition of any types is one). */
export type AnyWorkflow = WorkflowDefinition;
