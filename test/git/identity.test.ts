import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
beforeEach(async () => {
  // No identity anywhere: HOME is empty, system config is off, the repo has none.
  repo = await createTempRepo({ identity: false, empty: true });
});
afterEach(async () => {
  await repo.cleanup();
});

describe('commit identity', () => {
  it('commits with the Ratchet fallback identity when none is configured', async () => {
    const { git } = repo;
    expect(await git.configGet('user.email')).toBeNull();
    await repo.write({ 'a.txt': 'a\n' });
    const sha = await git.commitAll('initial');
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.run('log', '-1', '--format=%an <%ae> | %cn <%ce>')).toBe(
      'Ratchet <ratchet@localhost> | Ratchet <ratchet@localhost>',
    );
    // Notes and merges create commits too.
    await git.writeNote('tdd-handoffs', 'HEAD', '{}');
    expect(repo.run('log', '-1', '--format=%cn', 'refs/notes/tdd-handoffs')).toBe('Ratchet');
    // Nothing was written to the user's config.
    expect(await git.configGet('user.email')).toBeNull();
  });

  it("uses the user's identity when one is configured, and never signs", async () => {
    const { git } = repo;
    repo.run('config', 'user.name', 'Ada');
    repo.run('config', 'user.email', 'ada@example.com');
    repo.run('config', 'commit.gpgsign', 'true');
    repo.run('config', 'gpg.program', 'false');
    await repo.write({ 'a.txt': 'a\n' });
    await git.commitAll('initial');
    expect(repo.run('log', '-1', '--format=%an <%ae>')).toBe('Ada <ada@example.com>');
  });

  it("gives a sibling worktree's commits the identity its source looked up, without looking again", async () => {
    const { git } = repo;
    await repo.write({ 'a.txt': 'a\n' });
    await git.commitAll('initial');
    await git.addWorktree(repo.path('sibling'), 'ratchet/sibling', 'HEAD');
    const sibling = git.sibling(repo.path('sibling'));
    // Configured only after the source looked it up: the sibling shares that lookup (one per pool).
    repo.run('config', 'user.name', 'Ada');
    repo.run('config', 'user.email', 'ada@example.com');
    await writeFile(repo.path('sibling', 'b.txt'), 'b\n');
    expect(await sibling.commitAll('in the sibling')).not.toBeNull();
    expect(repo.run('-C', repo.path('sibling'), 'log', '-1', '--format=%an <%ae>')).toBe('Ratchet <ratchet@localhost>');
    // A Git of its own looks it up.
    await writeFile(repo.path('sibling', 'c.txt'), 'c\n');
    expect(await new Git(repo.path('sibling'), { env: repo.env }).commitAll('on its own')).not.toBeNull();
    expect(repo.run('-C', repo.path('sibling'), 'log', '-1', '--format=%an <%ae>')).toBe('Ada <ada@example.com>');
  });

  it('passes the environment through (HOME decides the global config)', async () => {
    await writeFile(repo.path('home', '.gitconfig'), '[user]\n\tname = Home\n\temail = home@example.com\n');
    const git = new Git(repo.dir, { env: repo.env });
    expect(await git.configGet('user.email')).toBe('home@example.com');
    await repo.write({ 'a.txt': 'a\n' });
    await git.commitAll('initial');
    expect(repo.run('log', '-1', '--format=%ae')).toBe('home@example.com');
  });
});
