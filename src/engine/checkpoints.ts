import { NOTES_REF, parseNote, type HandoffState } from '../core/handoff.js';
import type { Git } from '../git/git.js';
import type { Ledger, RunRow } from '../ledger/types.js';

export interface Checkpoint {
  sha: string;
  subject: string;
  date: string;
  state: HandoffState | null;
  /** Set when the note exists but cannot be read. */
  noteError: string | null;
  /**
   * Where `state` comes from: the git note, or (with a ledger, when the commit has no note in git,
   * e.g. after `ratchet reject` removed the run's notes) the note the run recorded in its ledger.
   */
  noteSource: 'git' | 'ledger' | null;
}

/**
 * The run's commits, oldest first, with their handoff notes: up to its branch, or, once the run
 * was accepted, rejected or rolled back (the branch is gone), up to the commit the branch had
 * then. A rejected run's commits stay readable until git collects them. A run with no branch or
 * base commit in the ledger (one that never made them) has none.
 */
export async function checkpointsOf(
  git: Git,
  run: Pick<RunRow, 'id' | 'branch' | 'baseCommit' | 'finalCommit'>,
  ledger?: Ledger,
): Promise<Checkpoint[]> {
  if (run.baseCommit === null) return [];
  const tip =
    (run.branch === null
      ? null
      : ((await git.revParse(run.branch)) ?? (await git.revParse(`refs/heads/${run.branch}`)))) ??
    (run.finalCommit ? await git.revParse(`${run.finalCommit}^{commit}`) : null);
  if (!tip) return [];
  const log = await git.log(`${run.baseCommit}..${tip}`);
  const recorded = ledger ? await ledgerNotes(ledger, run.id) : new Map<string, HandoffState>();
  const result: Checkpoint[] = [];
  for (const entry of log.reverse()) {
    const text = await git.readNote(NOTES_REF, entry.sha);
    const note = parseNote(text);
    const fallback = text === null ? (recorded.get(entry.sha) ?? null) : null;
    result.push({
      sha: entry.sha,
      subject: entry.subject,
      date: entry.date,
      state: note.state ?? fallback,
      noteError: note.problem === null ? null : `note ${note.problem}`,
      noteSource: text !== null && note.state ? 'git' : fallback ? 'ledger' : null,
    });
  }
  return result;
}

/** The handoff notes a run wrote (`note-write` events), by commit; the latest for a commit wins. */
export async function ledgerNotes(ledger: Ledger, runId: string): Promise<Map<string, HandoffState>> {
  const written = new Map<string, HandoffState>();
  for (const event of await ledger.events(runId, { types: ['note-write'] })) {
    if (event.type === 'note-write') written.set(event.commit, event.state);
  }
  return written;
}
