/**
 * Counting a checkout's changes before a run starts: an untracked directory is one entry, unless a
 * file the run is told to ignore (the tasks file `tasks plan` just wrote to a new `specs/`) is in
 * it; then its files count one by one, that one not (found with mine4's tasks runs).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countChanges } from '../../src/git/change-count.js';
import type { StatusEntry } from '../../src/git/types.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

describe('countChanges', () => {
  let repo: TempRepo;
  beforeEach(async () => {
    repo = await createTempRepo({ files: { 'README.md': '# x\n' } });
  });
  afterEach(async () => {
    await repo.cleanup();
  });

  const exceptTasksFile = (entry: StatusEntry): boolean => entry.path === 'specs/tasks.json';

  it('leaves out an exempt file inside a new untracked directory', async () => {
    await repo.write({ 'specs/tasks.json': '{}\n' });
    expect(await countChanges(repo.git, exceptTasksFile)).toEqual({ changes: 0, untracked: 0, paths: [] });
  });

  it("counts the directory's other files one by one beside it", async () => {
    await repo.write({ 'specs/tasks.json': '{}\n', 'specs/notes.md': 'mine\n', 'specs/deep/more.md': 'more\n' });
    expect(await countChanges(repo.git, exceptTasksFile)).toEqual({
      changes: 2,
      untracked: 2,
      paths: ['specs/deep/more.md', 'specs/notes.md'],
    });
  });

  it('keeps an untracked directory without an exempt file as one entry', async () => {
    await repo.write({ 'other/a.md': 'a\n', 'other/b.md': 'b\n' });
    expect(await countChanges(repo.git, exceptTasksFile)).toEqual({ changes: 1, untracked: 1, paths: ['other/'] });
  });
});
