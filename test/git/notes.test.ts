import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const REF = 'tdd-handoffs';
let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo();
});
afterEach(async () => {
  await repo.cleanup();
});

describe('git notes', () => {
  it('writes, reads, overwrites and lists notes readable by the git CLI', async () => {
    const { git } = repo;
    const first = await git.head();
    const state = JSON.stringify({ phase: 'RED', nextPhase: 'GREEN', cycleNumber: 1 }, null, 2);
    await git.writeNote(REF, 'HEAD', state);
    expect(await git.readNote(REF, first)).toBe(state);
    expect(repo.run('notes', '--ref=tdd-handoffs', 'show', 'HEAD')).toBe(state);
    expect(repo.run('notes', '--ref=refs/notes/tdd-handoffs', 'show', 'HEAD')).toBe(state);

    await git.writeNote(REF, first, '{"phase":"GREEN"}\n\n\n');
    expect(await git.readNote(REF, 'HEAD')).toBe('{"phase":"GREEN"}\n\n\n');

    await repo.write({ 'b.txt': 'b\n' });
    const second = await git.commitAll('test: b');
    if (second === null) throw new Error('expected a commit');
    expect(await git.readNote(REF, second)).toBeNull();
    await git.writeNote(`refs/notes/${REF}`, second, 'second');

    const listed = await git.listNotes(REF);
    expect(listed.map((note) => note.commit).sort()).toEqual([first, second].sort());
    const blob = listed.find((note) => note.commit === second)?.noteBlob ?? '';
    expect(repo.run('cat-file', 'blob', blob)).toBe('second');

    await git.removeNote(REF, second);
    await git.removeNote(REF, second);
    expect(await git.readNote(REF, second)).toBeNull();
    expect((await git.listNotes(REF)).map((note) => note.commit)).toEqual([first]);
  });

  it('returns null / empty when the notes ref does not exist', async () => {
    expect(await repo.git.readNote(REF, 'HEAD')).toBeNull();
    expect(await repo.git.listNotes(REF)).toEqual([]);
  });

  it('throws notes errors with the repair hint for a corrupt notes ref', async () => {
    const { git } = repo;
    await git.writeNote(REF, 'HEAD', 'ok');
    const blob = repo.run('rev-parse', 'HEAD:README.md');
    repo.run('update-ref', `refs/notes/${REF}`, blob);

    const attempts: Array<() => Promise<unknown>> = [
      () => git.readNote(REF, 'HEAD'),
      () => git.listNotes(REF),
      () => git.writeNote(REF, 'HEAD', 'x'),
      () => git.removeNote(REF, 'HEAD'),
    ];
    for (const attempt of attempts) {
      const error = await attempt().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RatchetError);
      expect(error).toMatchObject({
        code: 'notes',
        hint: "Run 'ratchet repair-notes' to recover.",
      });
      expect((error as Error).message).toContain('notes');
    }
  });

  it('throws a notes error for a commit that does not exist', async () => {
    await expect(repo.git.readNote(REF, 'no-such-commit')).rejects.toMatchObject({ code: 'notes' });
  });
});
