import { isRatchetError, RatchetError } from '../../core/errors.js';
import { NOTES_REF, parseNote, type HandoffState } from '../../core/handoff.js';
import type { StageName } from '../../core/stages.js';
import type { Git } from '../../git/git.js';
import type { Ledger } from '../../ledger/types.js';
import type { NotedCheckpoint, ResumePoint } from '../definition.js';
import { attemptCounterOf, type PriorAttempts } from './ports.js';

/** A TDD run, as far as its handoff notes go. */
interface RunOfNotes {
  id: string;
  branch: string;
  baseCommit: string;
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
 * up to the resume point are returned (oldest first) with the resume point itself, for `resume`
 * to record what the ledger lacks of them.
 */
export async function findResumePoint(git: Git, run: RunOfNotes, ledger: Ledger): Promise<ResumePoint> {
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
      const noted: NotedCheckpoint[] = [];
      for (const older of commits.slice(index)) {
        if (checkpoints.has(older.sha) && older.sha !== entry.sha) continue;
        const note = older.sha === entry.sha ? state : await ownNote(git, run, older.sha);
        if (note !== null) noted.unshift(notedCheckpoint(older, note));
      }
      return { commit: entry.sha, note: state, dropped, checkpoints: noted };
    }
    dropped++;
  }
  return { commit: run.baseCommit, note: null, dropped: commits.length, checkpoints: [] };
}

function notedCheckpoint(commit: { sha: string; subject: string }, note: HandoffState): NotedCheckpoint {
  return { sha: commit.sha, subject: commit.subject, note, stages: CHECKPOINT_STAGES[note.phase] };
}

/** The handoff note of this run on `commit`; null when it has none, or one that does not parse. */
async function ownNote(git: Git, run: RunOfNotes, commit: string): Promise<HandoffState | null> {
  const { state } = parseNote(await git.readNote(NOTES_REF, commit).catch(() => null));
  return state !== null && isOwnNote(state, run) ? state : null;
}

/** A note of this run (notes written before runs carried their id count as the run's). */
function isOwnNote(state: HandoffState, run: RunOfNotes): boolean {
  return state.runId === undefined || state.runId === run.id;
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
export async function priorAttempts(
  ledger: Ledger,
  run: Pick<RunOfNotes, 'id' | 'baseCommit'>,
  commit: string,
): Promise<PriorAttempts[]> {
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
async function readResumeNote(git: Git, run: RunOfNotes, commit: string): Promise<string | null> {
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
function notesRefusal(run: RunOfNotes, problem: string, cause?: unknown): RatchetError {
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
  run: RunOfNotes,
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
