import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, IdGenerator } from '../core/effects.js';
import { isRatchetError, RatchetError, toRatchetError } from '../core/errors.js';
import type { EventInput, RatchetEvent } from '../core/events.js';
import type { StageName } from '../core/stages.js';
import { NOTES_REF, type HandoffState } from '../core/handoff.js';
import { z } from 'zod';
import type { ConfigFlags } from '../config/load.js';
import type { ResolvedConfig } from '../config/resolved.js';
import { stageModelOverrideNotice, stageSettings } from '../config/resolved.js';
import { loadPrompts, packageRoot, renderTemplate, stagePrompt, type PromptSet } from '../config/prompts.js';
import { Git } from '../git/git.js';
import { acquireRepoLock } from '../git/repo-lock.js';
import { commandEnvironment } from '../process/env.js';
import type { ProcessRunner } from '../process/types.js';
import { detectTestCommand } from '../verify/detect.js';
import { requireReadableResults } from '../verify/run-tests.js';
import { editableInstallPaths } from '../verify/editable-installs.js';
import { checkNeedsRefactor } from '../code/size-check.js';
import type { Ledger, RunRow } from '../ledger/types.js';
import { asGitRun, isClosed, type GitRun } from './git-run.js';
import { ledgerNotes, parseNote, rolledBackError } from './run-control.js';
import { attemptCounterOf, type PriorAttempts, type TddDependencies, type TddPolicy } from '../workflows/tdd/ports.js';
import { initialHandoff, runTdd } from '../workflows/tdd/workflow.js';
import { createEnveloper } from './event-stream.js';
import { createGitWorkspace } from './git-workspace.js';
import {
  createModelPool,
  createRuntimeFactory,
  endpointVariable,
  runEndpoint,
  runModel,
  type ModelPool,
} from './model-factory.js';
import { CASSETTE_POSITION_EVENTS, cassettePositionAfterFailure, cassettePositionAt } from './cassette-position.js';
import { runBranch, runDir, worktreePath } from './run-paths.js';
import { createVerifierPort } from './verifier-port.js';
import { clearStaleGitLocks } from './stale-locks.js';
import {
  addRunWorktree,
  discardRunWorktree,
  RATCHET_EXCLUDES,
  requireCommit,
  requireWritableHome,
  shareDependencies,
} from './worktree-setup.js';
import { requireSandbox, toolSandbox, type ToolSandbox } from './tool-sandbox.js';
import { PYTHON_ENVIRONMENTS, withEditableInstalls } from './editable-install-env.js';
import { checkClaudeCode } from '../agent/claude-code/checks.js';
import { createRedactor, secretsFromEnv } from '../core/redact.js';

/** Effects the engine needs, injected by the CLI (or by tests). */
export interface EngineServices {
  ledger: Ledger;
  clock: Clock;
  ids: IdGenerator;
  runner: ProcessRunner;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

export interface RunOutcome {
  runId: string;
  status: 'completed' | 'failed' | 'interrupted';
  state: HandoffState | null;
  error: RatchetError | null;
}

export interface StartTddOptions {
  repoRoot: string;
  feature: string;
  config: ResolvedConfig;
  allowDirty: boolean;
  recordPath?: string;
  signal?: AbortSignal;
  /** The result of `checkTddStart` when the caller made those checks already (the CLI does, before the ledger exists). */
  checked?: TddStartCheck;
}

/** The services the checks before a run need: those of a run but the ledger (which a refused run never creates). */
export type TddCheckServices = Omit<EngineServices, 'ledger'>;

/** The per-stage agent runtimes of a TDD run (building one validates the provider and its key). */
function tddRuntimes(
  config: ResolvedConfig,
  services: TddCheckServices,
  promptDir: string,
  models?: ModelPool,
  sandbox?: ToolSandbox,
): ReturnType<typeof createRuntimeFactory> {
  return createRuntimeFactory({
    config,
    env: services.env,
    runner: services.runner,
    ...(sandbox ? { toolRunner: sandbox.runner } : {}),
    environment: commandEnvironment(services.env, config.bash.env),
    clock: services.clock,
    ...(models ? { models } : {}),
    ...(services.fetch ? { fetch: services.fetch } : {}),
    claude: {
      binary: config.refactor.claude.binary,
      promptDir,
      uuid: () => services.ids.uuid(),
      timeoutMs: config.tdd.stageTimeoutMs,
      ...(sandbox ? { runner: sandbox.claudeRunner } : {}),
    },
  });
}

/**
 * What can be known to fail before a run is created or touched: the provider and its key (the
 * runtime factory checks them), the Claude Code binary, a sandbox that cannot work (unless opted out), the prompts
 * (a `.ratchet/prompts.toml` that does not parse or renames a stage), and `$RATCHET_HOME`, where
 * the run's worktree goes.
 */
async function preflight(config: ResolvedConfig, services: TddCheckServices, repoRoot: string): Promise<PromptSet> {
  const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
  await requireWritableHome(config.home);
  tddRuntimes(config, services, config.home)('PLAN');
  if (config.provider.name === 'claude-code')
    await checkClaudeCode({ binary: config.refactor.claude.binary, runner: services.runner, env: services.env });
  // Model-written commands run only in a sandbox, unless the user opted out: refused before any model call.
  await requireSandbox(config, services.runner);
  return prompts;
}

/** What `checkTddStart` found, for `startTdd` (which then does not check again). */
export interface TddStartCheck {
  /** The working tree's uncommitted changes (some only with `allowDirty`), Ratchet's own `.ratchet/` left out. */
  changes: number;
  detected: Awaited<ReturnType<typeof detectTestCommand>>;
  prompts: PromptSet;
}

/**
 * Everything a new `ratchet tdd` run can be refused for, checked without writing anything: an
 * empty feature, a directory that is not a git repository or has no commit, uncommitted changes
 * (unless `allowDirty`), no test command, the provider and its key, the Claude Code binary, a
 * sandbox that cannot work (unless opted out), the prompts and `$RATCHET_HOME`. The CLI calls it before it opens (creates)
 * the ledger, so a refused run leaves nothing in the repository (no `.ratchet/ledger.db`, no line
 * in `.git/info/exclude`); `startTdd` calls it unless given its result.
 */
export async function checkTddStart(
  options: Pick<StartTddOptions, 'repoRoot' | 'feature' | 'config' | 'allowDirty'>,
  services: TddCheckServices,
): Promise<TddStartCheck> {
  const { config, repoRoot } = options;
  if (options.feature.trim() === '') {
    throw new RatchetError('usage', 'The feature to build is empty.', {
      hint: 'Describe it in plain words, e.g. ratchet tdd "Add a stack with push, pop and peek".',
    });
  }
  if (!(await Git.isRepository(repoRoot))) {
    throw new RatchetError('usage', `${repoRoot} is not a git repository.`, {
      hint: 'Run `git init` and commit your project first.',
    });
  }
  const git = new Git(repoRoot);
  await requireCommit(git, repoRoot);
  // `.ratchet/` (config, ledger) is kept out of git once a run starts (`.git/info/exclude`);
  // until then its untracked files are Ratchet's, not changes of the user's.
  const changes = (await git.status()).files.filter(
    (entry) => !(entry.index === '?' && entry.path.startsWith('.ratchet/')),
  ).length;
  if (changes > 0 && !options.allowDirty) {
    throw new RatchetError('dirty-tree', `The working tree has uncommitted changes (${changes} files).`, {
      hint: 'Commit or stash them, or pass --allow-dirty to start from HEAD without them.',
    });
  }
  const detected = await detectTestCommand(repoRoot, config.test.command);
  // A test command whose per-test results surely cannot be read would leave every gate blind.
  await requireReadableResults({ command: detected.command, framework: detected.framework, cwd: repoRoot });
  // Fail fast on a missing key or a bad endpoint, before any branch, worktree or run exists.
  const prompts = await preflight(config, services, repoRoot);
  return { changes, detected, prompts };
}

/** Starts `ratchet tdd`: branch + worktree from HEAD, then the loop. */
export async function* startTdd(
  options: StartTddOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { config, repoRoot } = options;
  const { changes, detected, prompts } = options.checked ?? (await checkTddStart(options, services));
  const git = new Git(repoRoot);
  await git.addInfoExclude(RATCHET_EXCLUDES);
  const runId = services.ids.runId();
  const lock = await acquireRepoLock(await git.commonDir(), { runId });
  try {
    const baseCommit = await git.head();
    const baseBranch = await git.currentBranch();
    const branch = runBranch(runId);
    const worktree = worktreePath(config.home, runId);
    await addRunWorktree(git, worktree, branch, baseCommit);
    let run: GitRun;
    try {
      await shareDependencies(repoRoot, worktree, git);
      run = asGitRun(
        await services.ledger.createRun({
          id: runId,
          workflow: 'tdd',
          repoRoot,
          feature: options.feature,
          branch,
          baseBranch,
          baseCommit,
          worktree,
          provider: config.provider.name,
          model: runModel(config),
          config: {
            testCommand: detected.command,
            framework: detected.framework,
            refactor: config.tdd.refactor,
            ...providerSettings(config, services.env, options.recordPath),
          },
        }),
      );
    } catch (error) {
      // No run in the ledger tracks them (`reject` could not find them): they go with the failure.
      await discardRunWorktree(git, worktree, branch).catch(() => undefined);
      throw error;
    }
    // The notes ref is shared by every run: a run killed while writing a note leaves its lock.
    const removedLocks = await clearStaleGitLocks(repoRoot, run);
    const envelope = createEnveloper(runId, services.clock);
    const startEvent = envelope({
      type: 'run-start',
      workflow: 'tdd',
      feature: options.feature,
      branch,
      worktree,
      baseCommit,
      resumed: false,
      ...cassetteAt(config, baseCommit, 0),
    });
    await services.ledger.record(startEvent);
    yield startEvent;
    if (removedLocks.length > 0) {
      const removal = envelope({ type: 'git-lock-remove', files: removedLocks });
      await services.ledger.record(removal);
      yield removal;
    }
    if (changes > 0) {
      const warning = envelope({
        type: 'warning',
        message: `--allow-dirty: the run starts from HEAD (${baseCommit.slice(0, 8)}); your ${changes} uncommitted changes are not part of it.`,
      });
      await services.ledger.record(warning);
      yield warning;
    }
    return yield* executeRun(
      run,
      initialHandoff(runId),
      envelope,
      { ...options, prompts, command: detected.command, framework: detected.framework },
      services,
    );
  } finally {
    await lock.release();
  }
}

export interface ResumeTddOptions {
  repoRoot: string;
  runId?: string;
  config: ResolvedConfig;
  recordPath?: string;
  signal?: AbortSignal;
}

/** A run that is over: completed, or accepted, rejected or rolled back. `resume` has nothing to do for it. */
export function isFinished(run: Pick<RunRow, 'status'>): boolean {
  return run.status === 'completed' || isClosed(run);
}

const StoredTddSettingsSchema = z.object({
  baseUrl: z.string().optional(),
  cassette: z.string().optional(),
  refactor: z.enum(['always', 'when-needed', 'never']).optional(),
  modelFlag: z.boolean().optional(),
  record: z.string().optional(),
});

/**
 * What a run stores of its provider beside provider and model: the endpoint it reaches the
 * provider at, however it was named (`--base-url`, `ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`,
 * `OLLAMA_HOST`, the provider's default; never with credentials, which are refused), and the
 * replay cassette.
 */
function providerSettings(
  config: ResolvedConfig,
  env: EngineServices['env'],
  recordPath: string | undefined,
): { baseUrl?: string; cassette?: string; modelFlag?: true; record?: string } {
  const endpoint = runEndpoint(config, env);
  return {
    ...(endpoint ? { baseUrl: endpoint } : {}),
    // `--record FILE` (absolute): `resume` keeps appending to it (see `resumeRecordPath`).
    ...(recordPath ? { record: recordPath } : {}),
    ...(config.provider.name === 'replay' && config.provider.cassette ? { cassette: config.provider.cassette } : {}),
    // `--model` applies to every stage, [stages.*] models included (see `runModelFromFlag`).
    ...(config.origins['provider.model'] === 'flag' ? { modelFlag: true as const } : {}),
  };
}

/**
 * Whether the run's model was given as a flag (`--model`, which applies to every stage) rather
 * than by the configuration (where `[stages.*] model` overrides it for its stage).
 */
export function runModelFromFlag(run: RunRow): boolean {
  return StoredTddSettingsSchema.safeParse(run.config).data?.modelFlag === true;
}

/** For a replayed run, where its cassette stands at `commit` (the `cassette` of a `run-start` event). */
function cassetteAt(
  config: ResolvedConfig,
  commit: string,
  position: number,
): { cassette?: { file: string; commit: string; position: number } } {
  return config.provider.name === 'replay' && config.provider.cassette
    ? { cassette: { file: config.provider.cassette, commit, position } }
    : {};
}

/**
 * The provider settings a TDD run started with, for `resume`: the provider, model, endpoint,
 * cassette and refactor mode it recorded (the endpoint also when only the environment named it,
 * so a shell without the variable, or with another value in it, does not send the run
 * elsewhere). Resuming with them keeps the model the run was started on (it is never swapped
 * silently); flags given to `resume` still win.
 */
export function runProviderFlags(
  run: RunRow,
): Pick<ConfigFlags, 'provider' | 'model' | 'baseUrl' | 'cassette' | 'refactor'> {
  const stored = StoredTddSettingsSchema.safeParse(run.config);
  const settings = stored.success ? stored.data : {};
  return {
    ...(run.provider ? { provider: run.provider } : {}),
    ...(run.model ? { model: run.model } : {}),
    ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
    ...(settings.cassette ? { cassette: settings.cassette } : {}),
    ...(settings.refactor ? { refactor: settings.refactor } : {}),
  };
}

/** A checkpoint of the run (a commit with a valid handoff note of this run), for `recordCheckpointsLeftOut`. */
interface NotedCommit {
  sha: string;
  subject: string;
  state: HandoffState;
}

/**
 * Finds the resume point of a run: the newest commit on its branch with a note of this run.
 * Commits after it that never became checkpoints (a stage cut short between its commit and its
 * note, a commit the agent made itself) are dropped by `resume`. A commit the ledger records as a
 * checkpoint of the run that has no note in git, and a note that cannot be read, are refused
 * (seed 003: notes errors fail fast with the recovery command): resuming would drop or misread
 * work that `ratchet repair-notes` restores from the ledger. The refusal changes nothing.
 *
 * A commit with a valid note of this run that the ledger does not record (a process killed
 * between writing a checkpoint's note and recording it) is a checkpoint all the same: those
 * up to the resume point are returned in `unrecorded` (oldest first), for `resume` to record.
 */
async function findResumePoint(
  git: Git,
  run: GitRun,
  ledger: Ledger,
): Promise<{
  commit: string;
  state: HandoffState | null;
  dropped: number;
  /** The resume point with its subject; null for the run's base commit. */
  checkpoint: NotedCommit | null;
  unrecorded: NotedCommit[];
}> {
  const commits = await git.log(`${run.baseCommit}..HEAD`);
  const checkpoints = new Set((await ledger.checkpoints(run.id)).map((row) => row.commitSha));
  let dropped = 0;
  for (const [index, entry] of [...commits, { sha: run.baseCommit, subject: '' }].entries()) {
    const text = await readResumeNote(git, run, entry.sha);
    if (text === null) {
      if (checkpoints.has(entry.sha)) throw await missingNotesError(git, run, commits.slice(index), checkpoints);
      dropped++;
      continue;
    }
    const { state, problem } = parseNote(text);
    if (state === null) throw notesRefusal(run, `the handoff note on ${entry.sha.slice(0, 8)} ${problem ?? ''}.`);
    if (isOwnNote(state, run)) {
      const unrecorded: NotedCommit[] = [];
      for (const older of commits.slice(index)) {
        if (checkpoints.has(older.sha)) continue;
        const note = older.sha === entry.sha ? state : await ownNote(git, run, older.sha);
        if (note !== null) unrecorded.unshift({ sha: older.sha, subject: older.subject, state: note });
      }
      const checkpoint = entry.sha === run.baseCommit ? null : { sha: entry.sha, subject: entry.subject, state };
      return { commit: entry.sha, state, dropped, checkpoint, unrecorded };
    }
    dropped++;
  }
  return { commit: run.baseCommit, state: null, dropped: commits.length, checkpoint: null, unrecorded: [] };
}

/** The handoff note of this run on `commit`; null when it has none, or one that does not parse. */
async function ownNote(git: Git, run: GitRun, commit: string): Promise<HandoffState | null> {
  const { state } = parseNote(await git.readNote(NOTES_REF, commit).catch(() => null));
  return state !== null && isOwnNote(state, run) ? state : null;
}

/** A note of this run (notes written before runs carried their id count as the run's). */
function isOwnNote(state: HandoffState, run: GitRun): boolean {
  return state.runId === undefined || state.runId === run.id;
}

/**
 * Records in the ledger what a killed process left out of it of the checkpoints it made: for each
 * commit `findResumePoint` found unrecorded (oldest first), and for the checkpoint the run resumes
 * from, its `checkpoint-create` and its `note-write` when the ledger lacks them (a kill between
 * the commit and note and their events, or between the two events), and the stage attempt that
 * made it, when still open, as accepted (`resume` would otherwise end it as interrupted). The
 * stage is read from the ledger's attempts of the note's cycle, phase and attempt (RED or RED_FIX,
 * say). On a replayed run, the checkpoint the run resumes from gets the cassette position it
 * resumes at. Returns the notices for the terminal (recorded too), one per checkpoint whose
 * `checkpoint-create` or `note-write` was missing.
 */
async function recordCheckpointsLeftOut(
  run: GitRun,
  point: { checkpoint: NotedCommit | null; unrecorded: readonly NotedCommit[] },
  ledger: Ledger,
  envelope: (event: EventInput) => RatchetEvent,
  cassette: { file: string; position: number } | undefined,
): Promise<RatchetEvent[]> {
  const { checkpoint: resumedFrom, unrecorded } = point;
  const recorded = new Set((await ledger.checkpoints(run.id)).map((row) => row.commitSha));
  const noted = await ledgerNotes(ledger, run.id);
  const attempts = await ledger.stages(run.id);
  /** Attempts this function closed: still open in `attempts`, read before it recorded their end. */
  const closed = new Set<number>();
  const isOpen = (row: (typeof attempts)[number]): boolean => row.endedAt === null && !closed.has(row.id);
  const candidates = [...unrecorded];
  if (resumedFrom !== null && !candidates.some((entry) => entry.sha === resumedFrom.sha)) candidates.push(resumedFrom);
  const notices: RatchetEvent[] = [];
  for (const { state, sha, subject } of candidates) {
    const phase = state.phase;
    const rows = attempts.filter(
      (row) =>
        row.cycle === state.cycleNumber &&
        row.phase === phase &&
        row.attempt === state.retryCount + 1 &&
        CHECKPOINT_STAGES[phase].includes(row.stage),
    );
    const made = rows.findLast(isOpen) ?? rows.at(-1);
    const stage = made?.stage ?? CHECKPOINT_STAGES[phase][0] ?? 'PLAN';
    const done: string[] = [];
    if (!recorded.has(sha)) {
      await ledger.record(
        envelope({
          type: 'checkpoint-create',
          stage,
          phase,
          commit: sha,
          subject,
          ...(sha === resumedFrom?.sha && cassette ? { cassette } : {}),
        }),
      );
      done.push('the checkpoint');
    }
    if (!noted.has(sha)) {
      await ledger.record(envelope({ type: 'note-write', commit: sha, state }));
      done.push('its handoff note');
    }
    // An attempt left open after a checkpoint the ledger has in full is closed silently, as
    // `resume` closes every attempt a killed process left open (but as accepted: it made the checkpoint).
    const silent = done.length === 0;
    if (made !== undefined && isOpen(made)) {
      closed.add(made.id);
      const { cycle, attempt } = made;
      const reason = 'checkpoint recorded by resume';
      await ledger.record(envelope({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'accepted', reason }));
      done.push(`its ${stage} attempt ${attempt} as accepted`);
    }
    if (silent) continue;
    const what = done.length === 1 ? (done[0] ?? '') : `${done.slice(0, -1).join(', ')} and ${done.at(-1) ?? ''}`;
    const message = `Checkpoint ${sha.slice(0, 8)} (${subject}) was made, but the process stopped before the ledger recorded all of it: recorded ${what}.`;
    const notice = envelope({ type: 'warning', message });
    await ledger.record(notice);
    notices.push(notice);
  }
  return notices;
}

/** The stages that make a checkpoint of each phase, the phase's own first. */
const CHECKPOINT_STAGES: Record<HandoffState['phase'], readonly StageName[]> = {
  PLAN: ['PLAN'],
  RED: ['RED', 'RED_FIX'],
  GREEN: ['GREEN'],
  REFACTOR: ['REFACTOR'],
  COMPLETE: [],
};

/**
 * What processes before this one left of the stages after `commit`, the checkpoint the run
 * resumes from: per cycle and stage (RED and RED_FIX together), the highest attempt number they
 * used and why the gate rejected the attempts it rejected (see `PriorAttempts`). Only attempts
 * made since the run's last checkpoint count, and only when that is `commit` (a run rolled back to
 * an older checkpoint starts its stages afresh), and none before a `run-end` that failed or
 * completed: a run resumed after a failure (a gate that rejected its last attempt, say) gets the
 * stage's attempts afresh, as the hint to fix the cause and resume promises. Attempts cut short
 * by a kill or an interruption (outcome `error`) leave their numbers used but do not count.
 */
export async function priorAttempts(ledger: Ledger, run: GitRun, commit: string): Promise<PriorAttempts[]> {
  const events = await ledger.events(run.id, { types: ['stage-start', 'stage-end', 'checkpoint-create', 'run-end'] });
  let lastCheckpoint = run.baseCommit;
  let counters = new Map<string, PriorAttempts>();
  for (const event of events) {
    if (event.type === 'checkpoint-create') {
      lastCheckpoint = event.commit;
      counters = new Map();
    } else if (event.type === 'run-end') {
      if (event.status !== 'interrupted') counters = new Map();
    } else if (event.type === 'stage-start' || event.type === 'stage-end') {
      const stage = attemptCounterOf(event.stage);
      if (stage === null) continue;
      const key = `${event.cycle}:${stage}`;
      const counter = counters.get(key);
      if (event.type === 'stage-start') {
        if (counter) counter.last = Math.max(counter.last, event.attempt);
        else counters.set(key, { cycle: event.cycle, stage, last: event.attempt, rejections: [] });
      } else if (counter && event.attempt <= counter.last && event.outcome === 'rejected') {
        counter.rejections.push(event.reason ?? 'rejected');
      }
    }
  }
  return lastCheckpoint === commit ? [...counters.values()] : [];
}

/** The handoff note on `commit`; a notes ref git cannot read is refused like a broken note. */
async function readResumeNote(git: Git, run: GitRun, commit: string): Promise<string | null> {
  try {
    return await git.readNote(NOTES_REF, commit);
  } catch (error) {
    if (!isRatchetError(error, 'notes')) throw error;
    throw notesRefusal(run, error.message, error);
  }
}

/**
 * `resume` refused because of the run's handoff notes (exit 2, as a usage error: the repository
 * needs `ratchet repair-notes` first; exit 1 is for a run that failed its gates).
 */
function notesRefusal(run: GitRun, problem: string, cause?: unknown): RatchetError {
  return new RatchetError('usage', `Run ${run.id} cannot be resumed: ${problem}`, {
    ...(cause === undefined ? {} : { cause }),
    hint: `Run \`ratchet repair-notes ${run.id}\` to restore its handoff notes from the ledger, then \`ratchet resume ${run.id}\`.`,
  });
}

/**
 * The refusal for checkpoints on the branch (`commits`, newest first, from the newest one that
 * lacks its note) whose handoff notes are gone from git, e.g. after the notes ref was deleted.
 */
async function missingNotesError(
  git: Git,
  run: GitRun,
  commits: ReadonlyArray<{ sha: string; subject: string }>,
  checkpoints: ReadonlySet<string>,
): Promise<RatchetError> {
  const missing: Array<{ sha: string; subject: string }> = [];
  for (const commit of commits) {
    if (checkpoints.has(commit.sha) && (await git.readNote(NOTES_REF, commit.sha).catch(() => null)) === null)
      missing.push(commit);
  }
  const newest = missing[0] ?? commits[0];
  const count = missing.length === 1 ? '1 checkpoint' : `${missing.length} checkpoints`;
  return notesRefusal(
    run,
    `${count} on branch ${run.branch} ${missing.length === 1 ? 'has' : 'have'} no handoff note in ${NOTES_REF}, though the ledger records ${missing.length === 1 ? 'it' : 'them'} (the newest: ${newest?.sha.slice(0, 8) ?? '?'} ${newest?.subject ?? ''}). Resuming would drop ${missing.length === 1 ? 'it' : 'them'}; nothing was changed.`,
  );
}

/**
 * Where a resumed run records its model calls: the `--record` given to `resume`, else the
 * cassette the run was being recorded into, appended to so that it holds the whole run; nothing
 * when this stretch is replayed (it may replay that very cassette).
 */
function resumeRecordPath(run: RunRow, config: ResolvedConfig, given: string | undefined): string | undefined {
  if (given !== undefined) return given;
  const stored = StoredTddSettingsSchema.safeParse(run.config).data?.record;
  return stored === undefined || config.provider.name === 'replay' ? undefined : stored;
}

/** The settings a run stored (`runs.config`), as an object (empty when there are none). */
function storedConfig(run: RunRow): Record<string, unknown> {
  return typeof run.config === 'object' && run.config !== null && !Array.isArray(run.config)
    ? { ...(run.config as Record<string, unknown>) }
    : {};
}

/**
 * Where a resumed replay run's cassette continues: after a run that failed (and was not rolled
 * back since), after the entries its last process played, which its failure used (see
 * `cassettePositionAfterFailure`); otherwise (killed, interrupted, rolled back) at the entries
 * played when `commit` (the checkpoint the run resumes from) was made. Undefined for other
 * providers.
 */
async function resumeCassettePosition(
  run: GitRun,
  commit: string,
  config: ResolvedConfig,
  ledger: Ledger,
): Promise<number | undefined> {
  const file = config.provider.name === 'replay' ? config.provider.cassette : undefined;
  if (file === undefined) return undefined;
  const events = await ledger.events(run.id, { types: CASSETTE_POSITION_EVENTS });
  // `ratchet rollback` sets a failed run's status to `interrupted`: it re-does from its checkpoint.
  const afterFailure = run.status === 'failed' ? cassettePositionAfterFailure(events, file) : null;
  if (afterFailure !== null && afterFailure.commit === commit) return afterFailure.position;
  const position = cassettePositionAt(events, commit, file, run.baseCommit);
  if (position === null) {
    throw new RatchetError(
      'config',
      `Cannot tell where cassette ${file} stood at checkpoint ${commit.slice(0, 8)} of run ${run.id}: that checkpoint was not made by replaying it.`,
      {
        hint: `Roll the run back to a checkpoint made while replaying it (\`ratchet history ${run.id}\`, then \`ratchet rollback <commit>\`), or resume with another provider or a cassette that starts at this checkpoint (--cassette).`,
      },
    );
  }
  return position;
}

/**
 * The one-line notice of a resume that keeps the run's recorded endpoint although the
 * environment names another (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `OLLAMA_HOST`): the
 * variable does not silently send the run elsewhere; `--base-url` does, when given.
 */
function ignoredEndpointNotice(run: RunRow, config: ResolvedConfig, env: EngineServices['env']): string | null {
  const recorded = StoredTddSettingsSchema.safeParse(run.config).data?.baseUrl;
  const variable = endpointVariable(config.provider.name);
  const value = variable === undefined ? undefined : env[variable]?.trim();
  if (
    recorded === undefined ||
    variable === undefined ||
    !value ||
    run.provider !== config.provider.name ||
    config.provider.baseUrl !== recorded
  )
    return null;
  const fromEnvironment = runEndpoint({ ...config, provider: { ...config.provider, baseUrl: undefined } }, env);
  if (fromEnvironment === recorded) return null;
  const redact = createRedactor(secretsFromEnv(env));
  return redact(
    `${variable} (${value}) is not used: run ${run.id} continues at ${recorded}, the endpoint it started with (--base-url chooses another).`,
  );
}

/** `ratchet resume`: continues a run from its last checkpoint (after a crash, kill -9, SIGINT or a failure). */
export async function* resumeTdd(
  options: ResumeTddOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { config, repoRoot } = options;
  const found = options.runId
    ? await services.ledger.getRun(options.runId)
    : (await services.ledger.listRuns(50)).find(
        (entry) =>
          entry.workflow === 'tdd' &&
          (entry.status === 'running' || entry.status === 'interrupted' || entry.status === 'failed'),
      );
  if (!found) {
    throw new RatchetError(
      'not-found',
      options.runId ? `No run ${options.runId} in this repository.` : 'No run to resume in this repository.',
      {
        hint: 'See `ratchet history` for the runs, or start one with `ratchet tdd "<feature>"`.',
      },
    );
  }
  // Restored from its backup: there is nothing of it left to resume, keep or drop.
  if (found.status === 'rolled-back')
    throw await rolledBackError(services.ledger, asGitRun(found), 'there is nothing to resume');
  if (found.workflow !== 'tdd') {
    throw new RatchetError('usage', `Run ${found.id} is a ${found.workflow} run; only tdd runs can be resumed.`, {
      hint: `Keep what it committed with \`ratchet accept ${found.id} --force\`, drop it with \`ratchet reject ${found.id}\`, or start a new \`ratchet refactor run\`.`,
    });
  }
  const run = asGitRun(found);
  if (isFinished(run)) {
    throw new RatchetError('usage', `Run ${run.id} is ${run.status}; there is nothing to resume.`);
  }
  const prompts = await preflight(config, services, repoRoot);
  const git = new Git(repoRoot);
  const lock = await acquireRepoLock(await git.commonDir(), { runId: run.id });
  try {
    // With the repository lock held, git lock files of this run can only be leftovers of a kill.
    const removedLocks = await clearStaleGitLocks(repoRoot, run);
    if (!existsSync(run.worktree)) {
      await git.pruneWorktrees();
      await git.addWorktree(run.worktree, run.branch);
    }
    await shareDependencies(repoRoot, run.worktree, git);
    const worktreeGit = new Git(run.worktree);
    await worktreeGit.resetHard('HEAD');
    await worktreeGit.clean();
    const point = await findResumePoint(worktreeGit, run, services.ledger);
    const head = await worktreeGit.head();
    const cassetteStart = await resumeCassettePosition(run, point.commit, config, services.ledger);
    const envelope = createEnveloper(run.id, services.clock, await services.ledger.lastEventNumber(run.id));
    const startEvent = envelope({
      type: 'run-start',
      workflow: 'tdd',
      feature: run.feature,
      branch: run.branch,
      worktree: run.worktree,
      baseCommit: run.baseCommit,
      resumed: true,
      ...cassetteAt(config, point.commit, cassetteStart ?? 0),
    });
    // The provider, model, endpoint and cassette this stretch of the run uses (flags to `resume` may choose others).
    const {
      baseUrl: _baseUrl,
      cassette: _cassette,
      modelFlag: _modelFlag,
      record: _record,
      ...kept
    } = storedConfig(run);
    const recordPath = resumeRecordPath(run, config, options.recordPath);
    await services.ledger.updateRun(run.id, {
      status: 'running',
      error: null,
      provider: config.provider.name,
      model: runModel(config),
      config: { ...kept, ...providerSettings(config, services.env, recordPath) },
    });
    await services.ledger.record(startEvent);
    yield startEvent;
    // Checkpoints a killed process made (commit and note) but did not record in full: recorded, said so.
    const replayed = config.provider.name === 'replay' ? config.provider.cassette : undefined;
    const notices = await recordCheckpointsLeftOut(
      run,
      point,
      services.ledger,
      envelope,
      replayed !== undefined && cassetteStart !== undefined ? { file: replayed, position: cassetteStart } : undefined,
    );
    for (const notice of notices) yield notice;
    // Attempts a killed process left open (no stage-end): they ended with it.
    for (const row of await services.ledger.stages(run.id)) {
      if (row.endedAt !== null) continue;
      const { stage, phase, cycle, attempt } = row;
      await services.ledger.record(
        envelope({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'error', reason: 'interrupted' }),
      );
    }
    if (recordPath !== undefined && recordPath !== options.recordPath) {
      const continued = envelope({
        type: 'log',
        message: `Recording continues in ${recordPath} (the run was started with --record).`,
      });
      await services.ledger.record(continued);
      yield continued;
    }
    const ignored = ignoredEndpointNotice(run, config, services.env);
    if (ignored !== null) {
      const notice = envelope({ type: 'warning', message: ignored });
      await services.ledger.record(notice);
      yield notice;
    }
    if (removedLocks.length > 0) {
      const removal = envelope({ type: 'git-lock-remove', files: removedLocks });
      await services.ledger.record(removal);
      yield removal;
    }
    if (point.commit !== head) {
      await worktreeGit.resetHard(point.commit);
      const warning = envelope({
        type: 'warning',
        message: `Dropped ${point.dropped} commit(s) after the last checkpoint ${point.commit.slice(0, 8)} (they had no handoff note).`,
      });
      await services.ledger.record(warning);
      yield warning;
    }
    const start = point.state ?? initialHandoff(run.id);
    // The stage a kill or an interruption cut short continues its attempts (numbers and limit).
    const prior = await priorAttempts(services.ledger, run, point.commit);
    const settings = run.config as { testCommand?: string };
    const detected = await detectTestCommand(run.worktree, config.test.command ?? settings.testCommand);
    return yield* executeRun(
      run,
      start,
      envelope,
      {
        ...options,
        prompts,
        feature: run.feature,
        command: detected.command,
        framework: detected.framework,
        ...(cassetteStart ? { cassetteStart } : {}),
        ...(recordPath ? { recordPath } : {}),
        priorAttempts: prior,
      },
      services,
    );
  } finally {
    await lock.release();
  }
}

interface ExecuteOptions {
  repoRoot: string;
  /** Loaded (and checked) by the preflight. */
  prompts: PromptSet;
  feature: string;
  config: ResolvedConfig;
  command: string;
  framework: Parameters<typeof createVerifierPort>[0]['framework'];
  recordPath?: string;
  signal?: AbortSignal;
  /** A replayed run: cassette entries played before this process (see `cassettePositionAt`). */
  cassetteStart?: number;
  /** A resumed run: what processes before this one left of the stages after its checkpoint. */
  priorAttempts?: readonly PriorAttempts[];
}

async function* executeRun(
  run: GitRun,
  start: HandoffState,
  envelope: (event: Parameters<ReturnType<typeof createEnveloper>>[0]) => RatchetEvent,
  options: ExecuteOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { config, prompts } = options;
  const worktreeGit = new Git(run.worktree);
  // One pool for every stage: a replay cassette is one ordered stream (continued from
  // `cassetteStart` on resume), a recorded one is written in call order.
  const models = createModelPool({
    config,
    env: services.env,
    ...(options.recordPath ? { recordPath: options.recordPath } : {}),
    ...(services.fetch ? { fetch: services.fetch } : {}),
    ...(options.cassetteStart ? { cassetteStart: options.cassetteStart } : {}),
  });
  // Removed (its private /tmp with it) when the run's generator ends, however it ends.
  await using sandbox = withEditableInstalls(
    await toolSandbox(config, services.runner, {
      protect: [options.repoRoot],
      worktree: run.worktree,
      dependenciesOf: options.repoRoot,
      runId: run.id,
    }),
    await editableInstallPaths(options.repoRoot, run.worktree, PYTHON_ENVIRONMENTS),
  );
  const sandboxStart = envelope({ type: 'sandbox-start', ...sandbox.start });
  await services.ledger.record(sandboxStart);
  yield sandboxStart;
  // `--model` won over `[stages.*] model` settings: said, never silent.
  const overridden = stageModelOverrideNotice(config);
  if (overridden !== null) {
    const warning = envelope({ type: 'warning', message: overridden });
    await services.ledger.record(warning);
    yield warning;
  }
  // Logs keep no secret whatever a command printed; commit messages and handoff notes keep no
  // key either (a test name the model wrote may hold one), though the user's text is kept as written.
  const redactStored = createRedactor(secretsFromEnv(services.env));
  const deps: TddDependencies = {
    workspace: createGitWorkspace(
      run.worktree,
      worktreeGit,
      createRedactor(secretsFromEnv(services.env), { shapes: 'keys' }),
    ),
    verifier: createVerifierPort({
      worktree: run.worktree,
      repoRoot: options.repoRoot,
      outputDir: join(runDir(options.repoRoot, run.id), 'verify'),
      command: options.command,
      framework: options.framework,
      config,
      // The tests run what the agent wrote: in the same sandbox as its shell.
      runner: sandbox.runner,
      environment: commandEnvironment(services.env, config.bash.env),
      redact: redactStored,
    }),
    agentFor: tddRuntimes(config, services, join(runDir(options.repoRoot, run.id), 'prompts'), models, sandbox),
    prompt(stage, variables) {
      const template = stagePrompt(prompts, stage);
      return { system: renderTemplate(template.system, variables), user: renderTemplate(template.user, variables) };
    },
    async refactorCheck(files) {
      const check = await checkNeedsRefactor(files, run.worktree, config.refactorCheck);
      return { needsRefactor: check.needsRefactor, reasons: check.reasons };
    },
  };
  const policy: TddPolicy = {
    feature: options.feature,
    refactor: config.tdd.refactor,
    testGlobs: config.test.patterns,
    bashTimeoutMs: config.bash.timeoutMs,
    runId: run.id,
    baseCommit: run.baseCommit,
    stage: (stage) => {
      const settings = stageSettings(config, stage);
      return { maxAttempts: settings.maxAttempts, maxTurns: settings.maxTurns, timeoutMs: settings.timeoutMs };
    },
  };
  const workflow = runTdd(policy, deps, start, options.signal, {
    ...(options.priorAttempts ? { priorAttempts: options.priorAttempts } : {}),
  });
  // Stage attempts started and not yet ended, oldest first: a run that stops inside one closes it.
  const open: StartedStage[] = [];
  let outcome: RunOutcome;
  try {
    while (true) {
      const next = await workflow.next();
      if (next.done) {
        outcome = { runId: run.id, status: 'completed', state: next.value.state, error: null };
        break;
      }
      trackOpenStages(open, next.value);
      // A replayed run records how far its cassette got with each checkpoint: `resume` continues there.
      const position = next.value.type === 'checkpoint-create' ? models.cassettePosition() : null;
      const event = envelope(
        next.value.type === 'checkpoint-create' && position !== null && config.provider.cassette !== undefined
          ? { ...next.value, cassette: { file: config.provider.cassette, position } }
          : next.value,
      );
      if (event.type !== 'model-delta') await services.ledger.record(event);
      yield event;
    }
  } catch (error) {
    const failure = interruptionBySignal(toRatchetError(error), options.signal);
    outcome = {
      runId: run.id,
      status: failure.code === 'interrupted' ? 'interrupted' : 'failed',
      state: null,
      error: failure,
    };
  }
  // The attempts the failure or the interruption cut short end as errors (innermost first), so
  // `status` and the report do not show them as still open once the run has stopped.
  for (const started of open.reverse()) {
    const { stage, phase, cycle, attempt } = started;
    const reason = outcome.error?.code ?? 'internal';
    const end = envelope({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'error', reason });
    await services.ledger.record(end);
    yield end;
  }
  await services.ledger.updateRun(run.id, {
    status: outcome.status,
    error: outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : null,
    finishedAt: services.clock.now().toISOString(),
  });
  const endEvent = envelope({
    type: 'run-end',
    status: outcome.status,
    ...(outcome.error ? { message: outcome.error.message } : {}),
  });
  await services.ledger.record(endEvent);
  yield endEvent;
  return outcome;
}

/**
 * An interruption says what interrupted the run when the run's signal was aborted with a signal's
 * name (the CLI aborts with `Error('SIGINT')` or `Error('SIGTERM')`): `details.signal`, and a bare
 * "Interrupted" becomes `Interrupted by SIGINT` (a message that says more, such as "Interrupted
 * while running the tests", is kept). Anything else is returned as it is.
 */
function interruptionBySignal(failure: RatchetError, signal: AbortSignal | undefined): RatchetError {
  if (failure.code !== 'interrupted' || !signal?.aborted) return failure;
  const reason: unknown = signal.reason;
  const name = reason instanceof Error && /^SIG[A-Z0-9]+$/.test(reason.message) ? reason.message : undefined;
  if (name === undefined) return failure;
  const message = failure.message === 'Interrupted' ? `Interrupted by ${name}` : failure.message;
  return new RatchetError('interrupted', message, {
    cause: failure,
    ...(failure.hint ? { hint: failure.hint } : {}),
    details: { ...failure.details, signal: name },
  });
}

type StartedStage = Extract<EventInput, { type: 'stage-start' }>;

/** Keeps `open` to the stage attempts `event` leaves started and not yet ended. */
function trackOpenStages(open: StartedStage[], event: EventInput): void {
  if (event.type === 'stage-start') {
    open.push({ ...event });
    return;
  }
  if (event.type !== 'stage-end') return;
  const index = open.findLastIndex(
    (started) => started.stage === event.stage && started.cycle === event.cycle && started.attempt === event.attempt,
  );
  if (index >= 0) open.splice(index, 1);
}
