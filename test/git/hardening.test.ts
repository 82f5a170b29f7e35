/**
 * Every git process Ratchet starts ignores the programs a repository names (issue 11, finding
 * 1: a nested repository's `core.fsmonitor` ran on the host on each of Ratchet's `git status`).
 * A repository is planted with a program behind every config key and hook git can run, in its
 * own config, in an untracked nested repository and in a committed, checked-out gitlink, each
 * appending its name to a marker file; then every `Git` method (and the code index's own git
 * calls) runs on a fresh copy and the marker must stay empty. A control run of plain git proves
 * the plants fire.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitChurn, gitHead, gitListFiles } from '../../src/code/index/git-files.js';
import { Git } from '../../src/git/git.js';

const HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'post-rewrite',
  'reference-transaction',
  'pre-auto-gc',
  'post-index-change',
  'fsmonitor-watchman',
];

/** A command appending `tag` to the marker file named by the environment. */
const mark = (tag: string): string => `echo ${tag} >> "$RATCHET_TEST_MARKER"`;

let template: string;
let home: string;

function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: baseEnv(), encoding: 'utf8' }).trim();
}

function baseEnv(marker = '/dev/null'): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    RATCHET_TEST_MARKER: marker,
  };
}

/**
 * Plants a program behind every key Ratchet's hardening claims to close, and every hook, in the
 * repository at `dir`; with `drivers`, also filter and diff drivers its `.gitattributes` selects
 * (what only a repository's own config, which the agent cannot write, defines for the worktree).
 */
function plant(dir: string, tag: string, options: { drivers: boolean }): void {
  const set = (key: string, value: string): void => void gitIn(dir, 'config', key, value);
  set('core.fsmonitor', `${mark(`${tag}:fsmonitor`)}; false`);
  set('core.pager', `${mark(`${tag}:pager`)}; cat`);
  set('pager.diff', `${mark(`${tag}:pager.diff`)}; cat`);
  set('pager.log', `${mark(`${tag}:pager.log`)}; cat`);
  set('diff.external', mark(`${tag}:diff.external`));
  set('diff.x.command', mark(`${tag}:diff.command`));
  set('diff.x.textconv', `${mark(`${tag}:textconv`)}; cat`);
  set('core.sshCommand', mark(`${tag}:ssh`));
  set('core.gitProxy', mark(`${tag}:gitProxy`));
  set('core.askPass', mark(`${tag}:askPass`));
  set('credential.helper', `!${mark(`${tag}:credential`)}`);
  set('core.editor', mark(`${tag}:editor`));
  set('sequence.editor', mark(`${tag}:sequence.editor`));
  set('gpg.program', mark(`${tag}:gpg`));
  set('commit.gpgSign', 'true');
  set('log.showSignature', 'true');
  set('merge.verifySignatures', 'true');
  set('submodule.recurse', 'true');
  set('status.submoduleSummary', 'true');
  set('diff.ignoreSubmodules', 'none');
  set('protocol.file.allow', 'always');
  if (options.drivers) {
    set('filter.x.clean', `${mark(`${tag}:clean`)}; cat`);
    set('filter.x.smudge', `${mark(`${tag}:smudge`)}; cat`);
    set('merge.x.driver', `${mark(`${tag}:merge.driver`)}; false`);
    writeFileSync(join(dir, '.gitattributes'), '* filter=x diff=x merge=x\n');
  }
  const hooks = gitIn(dir, 'rev-parse', '--path-format=absolute', '--git-path', 'hooks');
  mkdirSync(hooks, { recursive: true });
  for (const hook of HOOKS) {
    writeFileSync(join(hooks, hook), `#!/bin/sh\n${mark(`${tag}:hook-${hook}`)}\n`);
    chmodSync(join(hooks, hook), 0o755);
  }
}

/**
 * A repository with one commit and the programs planted, whose file then changes to content of
 * the same size with another time stamp: a status there must read the file (through its clean
 * filter) to tell.
 */
function nestedRepository(dir: string, tag: string, options: { drivers: boolean }): void {
  mkdirSync(dir, { recursive: true });
  gitIn(dir, 'init', '-q');
  writeFileSync(join(dir, 'n.txt'), 'nested\n');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-qm', 'nested');
  plant(dir, tag, options);
  writeFileSync(join(dir, 'n.txt'), 'NESTED\n');
  utimesSync(join(dir, 'n.txt'), new Date('2001-01-01'), new Date('2001-01-01'));
}

/**
 * `repo/`: a commit with a checked-out gitlink `emb` (nested repository E), branches `side`
 * (diverged) and `ahead` (a fast-forward), an untracked nested repository `sub` (S), changed
 * files, and programs in its own config (R). `drivers`: whether E also has filter drivers.
 */
function buildTemplate(root: string, options: { gitlinkDrivers: boolean }): string {
  const repo = join(root, 'repo');
  mkdirSync(repo, { recursive: true });
  gitIn(repo, 'init', '-q', '--initial-branch=main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  writeFileSync(join(repo, 'b.txt'), 'b\n');
  writeFileSync(join(repo, '.gitattributes'), '* diff=x merge=x\n');
  gitIn(repo, 'add', '-A');
  gitIn(repo, 'commit', '-qm', 'initial');
  nestedRepository(join(repo, 'emb'), 'E', { drivers: options.gitlinkDrivers });
  execFileSync('git', ['add', 'emb'], { cwd: repo, env: baseEnv(), stdio: 'ignore' });
  gitIn(repo, 'commit', '-qm', 'gitlink');
  gitIn(repo, 'branch', 'side');
  gitIn(repo, 'checkout', '-q', '-b', 'ahead');
  writeFileSync(join(repo, 'ahead.txt'), 'ahead\n');
  gitIn(repo, 'add', 'ahead.txt');
  gitIn(repo, 'commit', '-qm', 'ahead');
  gitIn(repo, 'checkout', '-q', 'side');
  writeFileSync(join(repo, 'b.txt'), 'b on side\n');
  writeFileSync(join(repo, 'side.txt'), 'side\n');
  gitIn(repo, 'add', 'b.txt', 'side.txt');
  gitIn(repo, 'commit', '-qm', 'side');
  gitIn(repo, 'checkout', '-q', 'main');
  nestedRepository(join(repo, 'sub'), 'S', { drivers: true });
  plant(repo, 'R', { drivers: false });
  writeFileSync(join(repo, 'a.txt'), 'a, changed\n');
  return root;
}

interface Scenario {
  repo: string;
  git: Git;
  marker: string;
  /** Every line the planted programs wrote, sorted and unique. */
  ran(): string[];
}

let copies = 0;
function scenario(from = template): Scenario {
  const root = join(tmpdir(), `ratchet-hardening-${process.pid}-${copies++}`);
  cpSync(from, root, { recursive: true, verbatimSymlinks: true });
  const marker = join(root, 'marker');
  const repo = join(root, 'repo');
  const env = baseEnv(marker);
  return {
    repo,
    git: new Git(repo, { env }),
    marker,
    ran: () =>
      existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').split('\n').filter(Boolean))].sort() : [],
  };
}

const PATCH = 'diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n';

/** Every `Git` method, and the code index's own git calls, as Ratchet uses them. */
const METHODS: Record<string, (s: Scenario) => Promise<unknown>> = {
  isRepository: (s) => Git.isRepository(s.repo, { env: baseEnv(s.marker) }),
  'root, commonDir, gitDirs, findLockFiles': async (s) => {
    await s.git.root();
    await s.git.commonDir();
    await s.git.findLockFiles(['refs/heads/main'], await s.git.gitDirs());
  },
  'currentBranch, head, revParse, configGet': async (s) => {
    await s.git.currentBranch();
    await s.git.head();
    await s.git.revParse('side');
    await s.git.configGet('user.email');
  },
  status: (s) => s.git.status(),
  hasChanges: (s) => s.git.hasChanges(),
  resetHard: (s) => s.git.resetHard('HEAD'),
  resetSoft: (s) => s.git.resetSoft('HEAD~1'),
  clean: (s) => s.git.clean(),
  checkout: (s) => s.git.checkout('side'),
  'branches and refs': async (s) => {
    await s.git.createBranch('y', 'HEAD');
    await s.git.branchExists('y');
    await s.git.listBranches();
    await s.git.deleteBranch('y', { force: true });
    await s.git.updateRef('refs/heads/z', 'side');
    await s.git.deleteRef('refs/heads/z');
  },
  'addWorktree, listWorktrees, removeWorktree, pruneWorktrees': async (s) => {
    const worktree = join(s.repo, '..', 'wt');
    await s.git.addWorktree(worktree, 'run', 'side');
    await s.git.listWorktrees();
    await s.git.removeWorktree(worktree, { force: true });
    await s.git.pruneWorktrees();
  },
  log: async (s) => {
    await s.git.log();
    await s.git.log('main..side', { maxCount: 5 });
  },
  'diff, diffStat, changedFiles (to the work tree)': async (s) => {
    await s.git.diff('HEAD');
    await s.git.diffStat('HEAD');
    await s.git.changedFiles('HEAD');
  },
  'diff, diffStat, changedFiles (between commits)': async (s) => {
    await s.git.diff('HEAD', 'side');
    await s.git.diffStat('HEAD', 'side');
    await s.git.changedFiles('HEAD', 'side');
  },
  'showFile, blobIds, existingPaths, isAncestor': async (s) => {
    await s.git.showFile('side', 'b.txt');
    await s.git.blobIds('side', ['b.txt']);
    await s.git.existingPaths('side', ['b.txt', 'emb']);
    await s.git.isAncestor('HEAD', 'side');
  },
  'stagedChanges, treeChanges, symlinksAt': async (s) => {
    await s.git.stagedChanges('HEAD');
    await s.git.treeChanges('HEAD', 'side');
    await s.git.symlinksAt('side');
  },
  'resetPaths, restorePaths': async (s) => {
    await s.git.resetPaths('HEAD', ['a.txt']);
    await s.git.restorePaths('side', ['b.txt']);
  },
  mergeFastForward: async (s) => {
    await s.git.resetHard('HEAD');
    await s.git.mergeFastForward('ahead');
  },
  merge: async (s) => {
    await s.git.resetHard('HEAD');
    await s.git.merge('side', 'merge side');
  },
  'applyCheck, apply': async (s) => {
    await s.git.applyCheck(PATCH);
    await s.git.apply(PATCH);
  },
  'bundleCreate, bundleHeads, fetchFromBundle': async (s) => {
    const bundle = join(s.repo, '..', 'backup.bundle');
    await s.git.bundleCreate(bundle);
    await s.git.bundleHeads(bundle);
    await s.git.fetchFromBundle(bundle, 'refs/heads/side');
  },
  'objects (cat-file --batch)': async (s) => {
    await using objects = s.git.objects();
    const head = await s.git.head();
    await objects.read(`${head}:a.txt`);
    await objects.read(`${head}:missing.txt`);
  },
  notes: async (s) => {
    const head = await s.git.head();
    await s.git.writeNote('tdd-handoffs', head, '{"phase":"PLAN"}\n');
    await s.git.readNote('tdd-handoffs', head);
    await s.git.listNotes('tdd-handoffs');
    await s.git.removeNote('tdd-handoffs', head);
  },
  'the code index: gitListFiles, gitChurn, gitHead': async (s) => {
    // These spawn git through the process runner, which merges `process.env`.
    process.env.RATCHET_TEST_MARKER = s.marker;
    try {
      await gitListFiles(s.repo);
      await gitChurn(s.repo, 10);
      await gitHead(s.repo);
    } finally {
      delete process.env.RATCHET_TEST_MARKER;
    }
  },
};

/** Methods that stage with `git add`, which asks `git status` inside a checked-out gitlink. */
const STAGING: Record<string, (s: Scenario) => Promise<unknown>> = {
  commitAll: (s) => s.git.commitAll('commit everything'),
  'commitAll with allowEmpty': (s) => s.git.commitAll('empty', { allowEmpty: true }),
  commitAllWithNote: (s) =>
    s.git.commitAllWithNote('checkpoint', { allowEmpty: true }, { ref: 'tdd-handoffs', text: '{"phase":"RED"}\n' }),
  commitAllWithNoteAndStatus: (s) =>
    s.git.commitAllWithNoteAndStatus(
      'checkpoint',
      { allowEmpty: true },
      { ref: 'tdd-handoffs', text: '{"phase":"RED"}\n' },
    ),
};

let stagingTemplate: string;

beforeAll(async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-hardening-')));
  home = join(root, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.com\n');
  template = buildTemplate(join(root, 'template'), { gitlinkDrivers: true });
  stagingTemplate = buildTemplate(join(root, 'staging'), { gitlinkDrivers: false });
}, 60_000);

afterAll(async () => {
  await rm(join(template, '..'), { recursive: true, force: true });
  for (let index = 0; index < copies; index++) {
    await rm(join(tmpdir(), `ratchet-hardening-${process.pid}-${index}`), { recursive: true, force: true });
  }
});

describe('the planted programs (control: plain git runs them)', () => {
  it('fire for plain git status, commit, checkout and diff', () => {
    const s = scenario();
    const env = baseEnv(s.marker);
    const run = (...args: string[]): void => void execFileSync('git', args, { cwd: s.repo, env, stdio: 'ignore' });
    run('status');
    run('diff', 'HEAD', 'side');
    run('-c', 'commit.gpgSign=false', 'commit', '-qam', 'x');
    run('checkout', '-q', 'side');
    expect(s.ran()).toEqual(
      expect.arrayContaining([
        'E:fsmonitor',
        'E:clean',
        'R:fsmonitor',
        'R:hook-pre-commit',
        'R:hook-post-checkout',
        'R:hook-reference-transaction',
        expect.stringMatching(/^R:diff.command/),
      ]),
    );
  });
});

describe("Ratchet's git runs none of a repository's programs", () => {
  it.each(Object.keys(METHODS))('%s', async (name) => {
    const s = scenario();
    await METHODS[name]?.(s).catch((error: unknown) => {
      throw new Error(`${name} failed: ${String(error)}`);
    });
    expect(s.ran()).toEqual([]);
  });

  it.each(Object.keys(STAGING))('%s (no program but a checked-out gitlink’s drivers, see below)', async (name) => {
    const s = scenario(stagingTemplate);
    await STAGING[name]?.(s);
    expect(s.ran()).toEqual([]);
    // Nothing signed the commit, nor ran a hook; the note is there.
    expect(gitIn(s.repo, 'cat-file', 'commit', 'HEAD')).not.toContain('gpgsig');
  });

  it('leaves one door open: git add runs the filter a checked-out gitlink defines (why workflows refuse gitlinks first)', async () => {
    const s = scenario();
    await s.git.commitAll('stage the gitlink');
    expect(s.ran()).toEqual(['E:clean']);
  });
});
