import { RatchetError } from '../../core/errors.js';
import type { NoteEntry } from '../types.js';
import { assertNotOption, type GitCommand } from './git-command.js';

/** Hint on every notes failure: the notes ref is Ratchet's handoff state. */
export const NOTES_HINT = "Run 'ratchet repair-notes' to recover.";

/** `tdd-handoffs` -> `refs/notes/tdd-handoffs`; full refs pass through. */
function notesRef(ref: string): string {
  assertNotOption(ref, 'notes ref');
  return ref.startsWith('refs/') ? ref : `refs/notes/${ref}`;
}

const FULL_SHA = /^[0-9a-f]{40}$/;

/** Resolves `commit` to a full sha; a missing commit is a `notes` error too (the caller asked for its note). */
async function resolveCommit(command: GitCommand, commit: string): Promise<string> {
  assertNotOption(commit, 'commit');
  const args = ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`];
  const result = await command.exec(args);
  if (result.exitCode !== 0) {
    throw new RatchetError('notes', `Cannot attach or read a note: '${commit}' is not a commit`, {
      hint: NOTES_HINT,
      details: { commit },
    });
  }
  return result.stdout.trim();
}

/**
 * Stores `text` byte for byte: the blob is written first and attached with `-C`, so git's
 * message clean-up (trailing blank lines, whitespace) never alters it.
 */
export async function writeNote(
  command: GitCommand,
  commitArgs: readonly string[],
  ref: string,
  commit: string,
  text: string,
): Promise<void> {
  const options = { code: 'notes', hint: NOTES_HINT } as const;
  // A full sha needs no lookup (checkpoints write one note per commit: the hot path); a missing
  // object still fails in `notes add`.
  const sha = FULL_SHA.test(commit) ? commit : await resolveCommit(command, commit);
  const blob = (
    await command.run(['hash-object', '-w', '--stdin'], {
      ...options,
      input: text,
    })
  ).trim();
  await command.run(
    [...commitArgs, 'notes', `--ref=${notesRef(ref)}`, 'add', '-f', '--allow-empty', '-C', blob, sha],
    options,
  );
}

/**
 * The note on `commit`, or null when it has none (including when the notes ref does not exist).
 * `git notes list <commit>` exits 1 for "no note" and 128 when the ref cannot be read.
 */
export async function readNote(command: GitCommand, ref: string, commit: string): Promise<string | null> {
  const options = { code: 'notes', hint: NOTES_HINT } as const;
  const sha = await resolveCommit(command, commit);
  const args = ['notes', `--ref=${notesRef(ref)}`, 'list', sha];
  const listed = await command.exec(args);
  if (listed.exitCode === 1) return null;
  if (listed.exitCode !== 0) throw command.failure(args, listed, options);
  return command.run(['cat-file', 'blob', listed.stdout.trim()], options);
}

/** Every note under `ref`; empty when the ref does not exist. */
export async function listNotes(command: GitCommand, ref: string): Promise<NoteEntry[]> {
  const output = await command.run(['notes', `--ref=${notesRef(ref)}`, 'list'], { code: 'notes', hint: NOTES_HINT });
  const entries: NoteEntry[] = [];
  for (const line of output.split('\n')) {
    const [noteBlob, commit] = line.trim().split(' ');
    if (noteBlob && commit) entries.push({ commit, noteBlob });
  }
  return entries;
}

/** Removes the note on `commit`; does nothing when there is none. */
export async function removeNote(
  command: GitCommand,
  commitArgs: readonly string[],
  ref: string,
  commit: string,
): Promise<void> {
  const sha = await resolveCommit(command, commit);
  await command.run([...commitArgs, 'notes', `--ref=${notesRef(ref)}`, 'remove', '--ignore-missing', sha], {
    code: 'notes',
    hint: NOTES_HINT,
  });
}
