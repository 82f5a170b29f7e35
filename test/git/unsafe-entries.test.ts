/**
 * Links resolve link by link inside the tree, never lexically (issue 11, finding 7: `a -> d/x/..`
 * with `d/x -> ..` passed a lexical check and left the repository), and the committed-tree check
 * behind `accept` sees the same as the kernel would after checkout.
 */
import { describe, expect, it } from 'vitest';
import { linkEscape, treeLinkReader, unsafeUncommitted } from '../../src/git/unsafe-entries.js';
import { createTempRepo } from '../support/temp-repo.js';

describe('linkEscape', () => {
  it.each([
    // [links of the tree, path checked, why it escapes (null: it stays inside)]
    [{ a: '/etc/passwd' }, 'a', 'points to the absolute path /etc/passwd'],
    [{ a: 'C:\\Users\\me' }, 'a', 'points to the absolute path C:\\Users\\me'],
    [{ a: '~/.ssh/id_rsa' }, 'a', 'points to the absolute path ~/.ssh/id_rsa'],
    [{ a: '../a.txt' }, 'a', 'climbs above the repository root'],
    [{ 'dir/a': '../b.txt' }, 'dir/a', null],
    [{ 'dir/a': '../../b.txt' }, 'dir/a', 'climbs above the repository root'],
    [{ 'dir/a': 'sub/../../../b' }, 'dir/a', 'climbs above the repository root'],
    [{ 'dir/a': './b.txt' }, 'dir/a', null],
    [{ 'dir/a': '..' }, 'dir/a', null],
    [{ 'dir/a': '..\\..\\x' }, 'dir/a', 'climbs above the repository root'],
    // The finding: each target alone stays inside, the chain does not.
    [{ 'd/x': '..', a: 'd/x/..' }, 'a', 'climbs above the repository root'],
    [{ 'd/x': '..', a: 'd/x/..' }, 'd/x', null],
    // Through a linked directory on the way.
    [{ here: '.', 'lib/m': '../here/x' }, 'lib/m', null],
    [{ up: '..', 'lib/m': '../up/x' }, 'lib/m', 'climbs above the repository root'],
    [{ 'lib/up': '../..' }, 'lib/up/etc/passwd', 'climbs above the repository root'],
    [{ deep: 'a/b/c', 'a/b/c': '../../../..' }, 'deep', 'climbs above the repository root'],
    [{ cfg: 'src/../.git/config' }, 'cfg', "leads into '.git'"],
    [{ cfg: '.GIT/hooks' }, 'cfg', "leads into '.git'"],
    [{ loop: 'loop2', loop2: 'loop' }, 'loop', 'is a loop of symbolic links'],
    [{}, 'plain/file.txt', null],
  ] as Array<[Record<string, string>, string, string | null]>)('%o: %s', async (links, path, why) => {
    expect(await linkEscape(path, treeLinkReader(new Map(Object.entries(links))))).toBe(why);
  });
});

/**
 * Before every checkpoint, `unsafeUncommitted(git)` reads the index's gitlinks from the same
 * `git status` that lists the changed paths (no `diff-index` beside it): a gitlink staged with no
 * directory on disk, or one moved to another commit, must still be found there.
 */
describe('unsafeUncommitted without paths', () => {
  it('finds a gitlink only the index holds, and one staged at another commit, from one status', async () => {
    const repo = await createTempRepo();
    try {
      const commit = repo.run('rev-parse', 'HEAD');
      repo.run('update-index', '--add', '--cacheinfo', `160000,${commit},vendor/lib`);
      const added = await unsafeUncommitted(repo.git);
      expect(added.map((entry) => `${entry.kind} ${entry.path} ${entry.detail}`)).toEqual([
        `gitlink vendor/lib staged as commit ${commit.slice(0, 12)}`,
      ]);
      repo.run('commit', '--quiet', '-m', 'gitlink');
      const other = repo.run('commit-tree', `${commit}^{tree}`, '-m', 'other');
      repo.run('update-index', '--cacheinfo', `160000,${other},vendor/lib`);
      expect((await unsafeUncommitted(repo.git)).map((entry) => `${entry.kind} ${entry.path}`)).toEqual([
        'gitlink vendor/lib',
      ]);
      // A committed gitlink left as it is, and an ordinary staged file, are not unsafe.
      repo.run('reset', '--quiet', 'HEAD', '--', 'vendor/lib');
      await repo.write({ 'notes.txt': 'plain\n' });
      repo.run('add', 'notes.txt');
      expect(await unsafeUncommitted(repo.git)).toEqual([]);
    } finally {
      await repo.cleanup();
    }
  });
});
