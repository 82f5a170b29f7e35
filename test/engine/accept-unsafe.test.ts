/**
 * `ratchet accept` re-checks everything the merge would bring into the user's branch (issues 11
 * and 18: gitlinks and symlinks leading out were fast-forwarded into it): a gitlink, a path
 * inside a `.git`, or a symbolic link that leads outside the repository once resolved in the
 * run's own tree makes it refuse, as a usage error naming the paths, for every workflow and with
 * --force too. The branches are built by hand, as if a run's own checks had been bypassed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asGitRun, type GitRun } from '../../src/engine/git-run.js';
import { acceptRun } from '../../src/library.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let ledger: Ledger;
let worktree: string;
let baseCommit: string;

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'src/app.js': 'export const version = 1;\n' } });
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
  baseCommit = await repo.git.head();
  worktree = repo.path('worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', baseCommit);
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

/** Plain git in the run's worktree: what an agent could do with the sandbox off. */
function inWorktree(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@x', ...args], {
    cwd: worktree,
    env: { ...process.env, ...repo.env },
    encoding: 'utf8',
  }).trim();
}

async function runOf(workflow: 'tdd' | 'refactor', status: 'completed' | 'failed' = 'completed'): Promise<GitRun> {
  await ledger.createRun({
    id: 'run-1',
    workflow,
    repoRoot: repo.dir,
    feature: 'f',
    branch: 'ratchet/run-1',
    baseBranch: 'main',
    baseCommit,
    worktree,
  });
  return asGitRun(await ledger.updateRun('run-1', { status }));
}

async function expectRefused(run: GitRun, force: boolean, paths: RegExp): Promise<void> {
  const head = await repo.git.head();
  const error = await acceptRun(repo.dir, run, ledger, { force }).catch((caught: unknown) => caught);
  expect(error).toMatchObject({ code: 'usage', hint: expect.stringContaining('--force does not override') as unknown });
  expect((error as Error).message).toMatch(paths);
  expect((error as Error).message).toContain('Nothing was merged.');
  expect(await repo.git.head()).toBe(head);
  expect((await repo.git.status()).clean).toBe(true);
  expect((await ledger.getRun('run-1'))?.status).toBe(run.status);
  expect(existsSync(worktree)).toBe(true);
}

describe('accept refuses what no run may bring into the branch', () => {
  it('a gitlink (a nested repository added with git add), for a tdd run', async () => {
    const sub = join(worktree, 'sub');
    await mkdir(sub);
    await writeFile(join(sub, 'x.txt'), 'x\n');
    execFileSync('git', ['init', '-q'], { cwd: sub });
    execFileSync('git', ['-c', 'user.name=A', '-c', 'user.email=a@x', 'commit', '-q', '--allow-empty', '-m', 'x'], {
      cwd: sub,
    });
    inWorktree('add', 'sub');
    inWorktree('commit', '-qm', 'plan: sub');
    await expectRefused(await runOf('tdd'), false, /sub \(a gitlink \(submodule entry\): commit [0-9a-f]{12}\)/);
  });

  it('a chain of links that leaves the repository, for a refactor run accepted with --force', async () => {
    // mkdir d && ln -s .. d/x && ln -s d/x/.. a: each target alone stays inside.
    await mkdir(join(worktree, 'd'));
    await symlink('..', join(worktree, 'd', 'x'));
    await symlink('d/x/..', join(worktree, 'a'));
    inWorktree('add', '-A');
    inWorktree('commit', '-qm', 'checkpoint: batch-001 links');
    await expectRefused(
      await runOf('refactor', 'failed'),
      true,
      /a \(a symbolic link that leads outside the repository: -> d\/x\/\.\.: climbs above the repository root\)/,
    );
  });

  it('links with absolute targets and links into .git', async () => {
    await symlink('/home/user/.ssh/id_rsa', join(worktree, 'key'));
    await symlink('src/../.git/config', join(worktree, 'cfg'));
    inWorktree('add', '-A');
    inWorktree('commit', '-qm', 'feat: links');
    await expectRefused(
      await runOf('tdd'),
      true,
      /^Run run-1 would bring 2 entries into main that no run may: cfg \(.*leads into '\.git'\), key \(.*points to the absolute path \/home\/user\/\.ssh\/id_rsa\)/,
    );
  });

  it('a path inside a .git directory (a tree built by hand)', async () => {
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: worktree,
      input: '[core]\n\tfsmonitor = touch /tmp/pwned\n',
      encoding: 'utf8',
    }).trim();
    const mktree = (entries: string): string =>
      execFileSync('git', ['mktree'], { cwd: worktree, input: entries, encoding: 'utf8' }).trim();
    const dotGit = mktree(`100644 blob ${blob}\tconfig\n`);
    const vendor = mktree(`040000 tree ${dotGit}\t.git\n`);
    const base = inWorktree('rev-parse', 'HEAD^{tree}');
    const listed = inWorktree('ls-tree', base);
    const root = mktree(`${listed}\n040000 tree ${vendor}\tvendor\n`);
    const commit = inWorktree('commit-tree', root, '-p', 'HEAD', '-m', 'feat: vendor');
    inWorktree('update-ref', 'refs/heads/ratchet/run-1', commit);
    await expectRefused(await runOf('tdd'), false, /vendor\/\.git\/config \(a nested git repository/);
  });
});

describe('accept checks only what the run brings in', () => {
  it("accepts a run beside the user's own link that leads out, and links of its own that stay inside", async () => {
    await symlink('/usr/share/doc', join(repo.dir, 'docs'));
    await repo.git.commitAll('user: docs link');
    baseCommit = await repo.git.head();
    execFileSync('git', ['reset', '-q', '--hard', baseCommit], { cwd: worktree });
    await symlink('src/app.js', join(worktree, 'app.js'));
    await symlink('../app.js', join(worktree, 'src', 'alias.js'));
    inWorktree('add', '-A');
    inWorktree('commit', '-qm', 'feat: aliases');
    const result = await acceptRun(repo.dir, await runOf('tdd'), ledger, { force: false });
    expect(result.mode).toBe('fast-forward');
    expect(repo.run('ls-tree', '--name-only', 'HEAD')).toContain('app.js');
  });
});
