import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Git } from '../../src/git/git.js';

/** A throw-away repository created by `createTempRepo`. */
export interface TempRepo {
  /** Temporary root holding `repo/`, `home/` and anything else a test creates (use `path()`). */
  root: string;
  /** Absolute, symlink-free path of the repository's work tree. */
  dir: string;
  /**
   * Environment that isolates git from the machine's config: `HOME` is an empty directory under
   * `root` and `GIT_CONFIG_NOSYSTEM=1`. Pass it to anything else that runs git on this repo.
   */
  env: Record<string, string>;
  /** A `Git` for `dir` using `env`. */
  git: Git;
  /** An absolute path under `root` (not created), e.g. for worktrees or bundles. */
  path(...segments: string[]): string;
  /** Writes files relative to `dir`, creating directories. */
  write(files: Record<string, string>): Promise<void>;
  /** Runs the git CLI synchronously in `dir` with `env`; returns trimmed stdout. */
  run(...args: string[]): string;
  /** Deletes `root`. Safe to call twice. */
  cleanup(): Promise<void>;
}

export interface TempRepoOptions {
  /** Default `main`. */
  initialBranch?: string;
  /** Files of the initial commit (default `{ 'README.md': '# test\n' }`). */
  files?: Record<string, string>;
  /** Repository-local `user.name` / `user.email`; `false` leaves the repo without an identity. */
  identity?: { name: string; email: string } | false;
  /** Skip the initial commit (the branch stays unborn). */
  empty?: boolean;
}

/**
 * Creates a git repository in a fresh temporary directory with one commit (`initial`), a
 * repository-local identity and signing disabled, isolated from global and system git config.
 * Call `cleanup()` in `afterEach`.
 */
export async function createTempRepo(options: TempRepoOptions = {}): Promise<TempRepo> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-test-')));
  const dir = join(root, 'repo');
  const home = join(root, 'home');
  await mkdir(home, { recursive: true });
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const git = await Git.init(dir, {
    env,
    initialBranch: options.initialBranch ?? 'main',
  });

  const run = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    }).trim();
  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [name, content] of Object.entries(files)) {
      const file = join(dir, name);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  };

  const identity = options.identity ?? {
    name: 'Test User',
    email: 'test@example.com',
  };
  if (identity) {
    run('config', 'user.name', identity.name);
    run('config', 'user.email', identity.email);
  }
  run('config', 'commit.gpgsign', 'false');
  if (!options.empty) {
    await write(options.files ?? { 'README.md': '# test\n' });
    await git.commitAll('initial');
  }

  return {
    root,
    dir,
    env,
    git,
    path: (...segments) => join(root, ...segments),
    write,
    run,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
