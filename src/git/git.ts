/**
 * Longer than 500 lines on purpose: `Git` is the one typed wrapper over the git CLI (about sixty
 * methods of a few lines each, the parsing and command building already in `internal/`), and
 * splitting the class would split the one interface every layer above uses.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { GitCommand, assertNotOption, commitConfigArgs, configValue } from './internal/git-command.js';
import { buildGitEnv, execGit } from './internal/exec-git.js';
import { appendMissingLines } from './internal/info-exclude.js';
import type { ObjectReader } from './internal/object-reader.js';
import * as notes from './internal/notes.js';
import {
  LOG_FORMAT,
  parseCatFileBatch,
  parseLog,
  parseNumstat,
  parseRawDiff,
  parseStatus,
  parseWorktreeList,
  splitNul,
} from './internal/parse.js';
import type {
  ApplyCheckResult,
  DiffStat,
  GitOptions,
  GitStatus,
  LogEntry,
  NoteEntry,
  RawDiffEntry,
  WorktreeInfo,
} from './types.js';

/**
 * Options that make diffs independent of user config (noprefix, relative) and of the
 * repository's drivers: no external diff program, no textconv filter (diffs are data here).
 */
const DIFF_FLAGS = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--no-relative',
  '--no-renames',
  '--src-prefix=a/',
  '--dst-prefix=b/',
];

/**
 * Typed wrapper over the git CLI for one repository or worktree directory.
 *
 * Every failure is a `RatchetError` with code `git` whose message names the command and git's
 * stderr (`details` holds `args`, `cwd`, `exitCode`, `stderr`); notes operations fail with code
 * `notes` and the hint "Run 'ratchet repair-notes' to recover.". Commands run without a shell,
 * with `GIT_DIR`-style variables inherited from a parent git process removed, and hardened: no
 * hook, fsmonitor, pager, external diff, transport or signing program ever runs, whatever the
 * repository's (or a nested repository's) config says (see `internal/hardening.ts`).
 *
 * Paths given to methods are relative to the repository root unless documented otherwise; `dir`
 * should be the top level of a repository or worktree.
 */
export class Git {
  /** Absolute path of the repository or worktree this instance runs in. */
  readonly dir: string;
  private readonly command: GitCommand;
  /** The identity options of commit-creating commands, looked up once per instance. */
  private identity: Promise<string[]> | undefined;
  /** The instance whose identity this one shares (see `sibling`). */
  private identityOf: Git | undefined;

  constructor(
    dir: string,
    private readonly options: GitOptions = {},
  ) {
    this.dir = resolve(dir);
    this.command = new GitCommand(this.dir, options.env ?? {});
  }

  /**
   * A `Git` for another linked worktree of the same repository, with this one's options, that
   * shares this one's commit identity: both read the same configuration (a linked worktree has
   * no settings of its own unless git's `worktreeConfig` gives it some, which Ratchet's own
   * worktrees never get), so a pool's tasks look it up once, not once each.
   */
  sibling(dir: string): Git {
    const other = new Git(dir, this.options);
    other.identityOf = this;
    return other;
  }

  /** True when `dir` exists and is inside a git repository (work tree or bare). */
  static async isRepository(dir: string, options: GitOptions = {}): Promise<boolean> {
    try {
      const result = await execGit(['rev-parse', '--git-dir'], {
        cwd: resolve(dir),
        env: buildGitEnv(options.env),
      });
      return result.exitCode === 0;
    } catch {
      return false; // The directory does not exist.
    }
  }

  /** Creates `dir` if needed and runs `git init` in it. */
  static async init(dir: string, options: GitOptions & { initialBranch?: string; bare?: boolean } = {}): Promise<Git> {
    await mkdir(dir, { recursive: true });
    const git = new Git(dir, options);
    const args = ['init', '--quiet', ...(options.bare === true ? ['--bare'] : [])];
    if (options.initialBranch !== undefined) {
      assertNotOption(options.initialBranch, 'branch');
      args.push(`--initial-branch=${options.initialBranch}`);
    }
    await git.command.run(args);
    return git;
  }

  // ---- Repository and refs ----

  /** Absolute path of the top level of this work tree (`rev-parse --show-toplevel`). */
  async root(): Promise<string> {
    return (await this.command.run(['rev-parse', '--show-toplevel'])).trim();
  }

  /** Absolute path of the common git directory, the same for the main checkout and all worktrees. */
  async commonDir(): Promise<string> {
    return (await this.command.run(['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  }

  /**
   * Absolute path of this work tree's own git directory: `.git` of the main checkout,
   * `<commonDir>/worktrees/<name>` of a linked worktree (`rev-parse --git-dir`).
   */
  async gitDir(): Promise<string> {
    return (await this.gitDirs()).gitDir;
  }

  /** `gitDir()` and `commonDir()` from one git process. */
  async gitDirs(): Promise<GitDirs> {
    const lines = (
      await this.command.run(['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir'])
    ).split('\n');
    const [gitDir = '', commonDir = ''] = lines.map((line) => line.trim());
    return { gitDir, commonDir };
  }

  /**
   * The lock files git leaves behind when it is killed in the middle of an operation, as far as
   * they belong to this linked worktree or to the given refs, and exist now:
   *
   * - `index.lock`, `HEAD.lock` and `ORIG_HEAD.lock` in this worktree's private git directory,
   *   only when this is a linked worktree: the main checkout's own files (`.git/index.lock`) are
   *   never listed, since the user's git may hold them;
   * - `<commonDir>/<ref>.lock` for each full ref name in `refs` (`refs/heads/ratchet/<id>`,
   *   `refs/notes/tdd-handoffs`), with the files backend's layout.
   *
   * Only lists them: whether one is stale (its git process is gone) is the caller's judgement.
   * `dirs`: this work tree's `gitDirs()` when the caller already has them.
   */
  async findLockFiles(refs: readonly string[] = [], dirs?: GitDirs): Promise<string[]> {
    const { gitDir, commonDir } = dirs ?? (await this.gitDirs());
    const candidates: string[] = [];
    if (resolve(gitDir) !== resolve(commonDir)) {
      for (const name of WORKTREE_LOCK_FILES) candidates.push(join(gitDir, name));
    }
    for (const ref of refs) candidates.push(`${join(commonDir, checkedRefPath(ref))}.lock`);
    const found: string[] = [];
    for (const candidate of new Set(candidates)) {
      if (await isFile(candidate)) found.push(candidate);
    }
    return found;
  }

  /** Short name of the checked-out branch, or null when HEAD is detached. */
  async currentBranch(): Promise<string | null> {
    const args = ['symbolic-ref', '--quiet', '--short', 'HEAD'];
    const result = await this.command.exec(args);
    if (result.exitCode === 1) return null;
    if (result.exitCode !== 0) throw this.command.failure(args, result);
    return result.stdout.trim();
  }

  /** Full sha of HEAD; throws when the branch has no commits yet. */
  async head(): Promise<string> {
    return (await this.command.run(['rev-parse', '--verify', 'HEAD'])).trim();
  }

  /**
   * Full sha of the object `ref` names, or null when it does not resolve. Not peeled: pass
   * `ref^{commit}` to resolve an annotated tag to its commit.
   */
  async revParse(ref: string): Promise<string | null> {
    assertNotOption(ref, 'ref');
    const result = await this.command.exec(['rev-parse', '--verify', '--quiet', ref]);
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /** Value of a config key as git resolves it here (last value wins), or null when unset. */
  async configGet(key: string): Promise<string | null> {
    return configValue(this.command, key);
  }

  // ---- Working tree ----

  /**
   * `git status --porcelain=v2 -z --untracked-files=all`; untracked files make it dirty. With
   * `untracked: 'normal'`, an untracked directory is one entry (as `git status` shows it to the
   * user: a `.venv/` is one change, not its thousands of files); ignored files never appear. With
   * `modes`, entries also carry their HEAD and index modes and index object (see `parseStatus`):
   * what `git diff-index --cached HEAD` would say, without a second process.
   */
  async status(
    options: { untracked?: 'all' | 'normal'; modes?: boolean; paths?: readonly string[] } = {},
  ): Promise<GitStatus> {
    // No optional index refresh: status must not contend for index.lock with a concurrent run.
    const untracked = `--untracked-files=${options.untracked ?? 'all'}`;
    const pathspec = options.paths === undefined ? [] : ['--', ...options.paths.map((path) => `:(literal)${path}`)];
    const output = await this.command.run(['status', '--porcelain=v2', '-z', untracked, ...pathspec], {
      env: { GIT_OPTIONAL_LOCKS: '0' },
    });
    const parsed = parseStatus(output);
    const files =
      options.modes === true
        ? parsed
        : parsed.map(({ path, origPath, index, worktree }) => ({
            path,
            ...(origPath === undefined ? {} : { origPath }),
            index,
            worktree,
          }));
    return { clean: files.length === 0, files };
  }

  /** True when anything is staged, modified or untracked. */
  async hasChanges(): Promise<boolean> {
    return !(await this.status()).clean;
  }

  /**
   * Stages everything (`git add -A`) and commits it. Returns the new commit's sha, or null when
   * there was nothing to commit and `allowEmpty` is false. No hook runs.
   *
   * `git add` asks `git status` inside every checked-out gitlink: refuse gitlinks and nested
   * repositories (`unsafe-entries.ts`) before staging a tree the model wrote.
   */
  async commitAll(message: string, options: { allowEmpty?: boolean } = {}): Promise<string | null> {
    await this.command.run(['add', '-A']);
    if (!options.allowEmpty) {
      const args = ['diff', '--cached', '--quiet', '--no-ext-diff'];
      const staged = await this.command.exec(args);
      if (staged.exitCode === 0) return null;
      if (staged.exitCode !== 1) throw this.command.failure(args, staged);
    }
    const args = [...(await this.commitArgs()), 'commit', '--quiet', '--file=-'];
    if (options.allowEmpty) args.push('--allow-empty');
    await this.command.run(args, { input: message });
    return this.head();
  }

  /**
   * `commitAll` and `writeNote` in one go, as one short shell script (a checkpoint is on every
   * stage's path; each process Node spawns costs milliseconds). Stages everything, commits
   * (`null` when nothing changed and `allowEmpty` is false), then attaches `note` to the new
   * commit. The note text must survive `git notes add -F` unchanged (JSON does). The message
   * and the note go to git through files, never through the environment or the command line,
   * whose size the kernel limits (`spawn E2BIG` with a test list of 140 KB in a note). The caveat
   * of `commitAll` about gitlinks holds here too.
   */
  async commitAllWithNote(
    message: string,
    options: { allowEmpty?: boolean },
    note?: { ref: string; text: string },
  ): Promise<string | null> {
    return (await this.#commitScript(message, options, note, false)).commit;
  }

  /**
   * `commitAllWithNote`, then `status({ modes: true })` of the tree it left, in the same script:
   * a caller that keeps the status until the tree may change (the tasks pipeline's workspace)
   * needs no `git status` process after each checkpoint. `status` is undefined when that last
   * step failed (the commit and the note stand).
   */
  async commitAllWithNoteAndStatus(
    message: string,
    options: { allowEmpty?: boolean },
    note?: { ref: string; text: string },
  ): Promise<{ commit: string | null; status: GitStatus | undefined }> {
    return this.#commitScript(message, options, note, true);
  }

  async #commitScript(
    message: string,
    options: { allowEmpty?: boolean },
    note: { ref: string; text: string } | undefined,
    withStatus: boolean,
  ): Promise<{ commit: string | null; status: GitStatus | undefined }> {
    const script = [
      'set -e',
      'git add -A',
      'sha=',
      'if [ "$RATCHET_ALLOW_EMPTY" = 1 ] || ! git diff --cached --quiet --no-ext-diff; then',
      'git "$@" commit --quiet --file="$RATCHET_MESSAGE_FILE" $RATCHET_COMMIT_FLAGS',
      'sha=$(git rev-parse --verify HEAD)',
      'if [ -n "$RATCHET_NOTE_REF" ]; then git "$@" notes --ref="$RATCHET_NOTE_REF" add -f --allow-empty --file="$RATCHET_NOTE_FILE" "$sha" || exit 3; fi',
      'fi',
      'echo "$sha"',
      // As `status()` reads it (no optional index refresh); its failure is not the commit's.
      'if [ "$RATCHET_STATUS" = 1 ]; then GIT_OPTIONAL_LOCKS=0 git status --porcelain=v2 -z --untracked-files=all || exit 4; fi',
    ].join('\n');
    // Synchronous on purpose: two small files and a directory, on every checkpoint of a pool's
    // every task; each asynchronous step would be a round trip through libuv's thread pool and a
    // promise (about a dozen per checkpoint), for writes that take microseconds.
    const texts = mkdtempSync(join(tmpdir(), 'ratchet-commit-'));
    try {
      const messageFile = join(texts, 'message');
      const noteFile = join(texts, 'note');
      writeFileSync(messageFile, message, { mode: 0o600 });
      if (note) writeFileSync(noteFile, note.text, { mode: 0o600 });
      const result = await this.command.script(script, await this.commitArgs(), {
        env: {
          RATCHET_MESSAGE_FILE: messageFile,
          RATCHET_ALLOW_EMPTY: options.allowEmpty ? '1' : '0',
          RATCHET_COMMIT_FLAGS: options.allowEmpty ? '--allow-empty' : '',
          RATCHET_NOTE_REF: note ? (note.ref.startsWith('refs/') ? note.ref : `refs/notes/${note.ref}`) : '',
          RATCHET_NOTE_FILE: noteFile,
          RATCHET_STATUS: withStatus ? '1' : '0',
        },
      });
      if (result.exitCode === 3) {
        throw new RatchetError('notes', `Could not write the note on the new commit: ${result.stderr.trim()}`, {
          hint: notes.NOTES_HINT,
        });
      }
      // The sha's line is out once the commit and its note are: exit 4 after it is status's failure alone.
      const newline = result.stdout.indexOf('\n');
      const statusFailed = withStatus && result.exitCode === 4 && newline >= 0;
      if (result.exitCode !== 0 && !statusFailed) throw this.command.failure(['commit', '(checkpoint)'], result);
      const sha = (newline < 0 ? result.stdout : result.stdout.slice(0, newline)).trim();
      const files = withStatus && !statusFailed ? parseStatus(result.stdout.slice(newline + 1)) : undefined;
      return {
        commit: sha === '' ? null : sha,
        status: files === undefined ? undefined : { clean: files.length === 0, files },
      };
    } finally {
      rmSync(texts, { recursive: true, force: true });
    }
  }

  private commitArgs(): Promise<string[]> {
    this.identity ??= this.identityOf?.commitArgs() ?? commitConfigArgs(this.command);
    return this.identity;
  }

  /** `git reset --hard <ref>`. */
  async resetHard(ref: string): Promise<void> {
    assertNotOption(ref, 'ref');
    await this.command.run(['reset', '--hard', '--quiet', ref]);
  }

  /** `git reset --soft <ref>`: moves the branch to `ref`, keeping later changes staged. */
  async resetSoft(ref: string): Promise<void> {
    assertNotOption(ref, 'ref');
    await this.command.run(['reset', '--soft', '--quiet', ref]);
  }

  /**
   * `git clean -ffd`: removes untracked files and directories, nested repositories included
   * (`-fd` alone keeps them); ignored ones (the shared dependency links) stay. For Ratchet's own
   * worktrees only: in a user's checkout it would delete their untracked clones.
   */
  async clean(): Promise<void> {
    await this.command.run(['clean', '-ffd', '--quiet']);
  }

  /** Checks out a branch (or detaches at any other commit-ish). */
  async checkout(ref: string): Promise<void> {
    assertNotOption(ref, 'ref');
    // The trailing `--` makes `ref` a revision even when a file has the same name.
    await this.command.run(['checkout', '--quiet', ref, '--']);
  }

  /**
   * Writes `<commonDir>/info/exclude` lines for each pattern not already present (creating the
   * file), so the patterns apply to the main checkout and every worktree. Idempotent.
   */
  async addInfoExclude(patterns: readonly string[]): Promise<void> {
    await appendMissingLines(join(await this.commonDir(), 'info', 'exclude'), patterns);
  }

  // ---- Branches ----

  /** Creates branch `name` at `startPoint` without checking it out; fails when it exists. */
  async createBranch(name: string, startPoint: string): Promise<void> {
    assertNotOption(name, 'branch');
    assertNotOption(startPoint, 'ref');
    await this.command.run(['branch', '--quiet', name, startPoint]);
  }

  /** Deletes a branch; `force` deletes it even when it is not merged. */
  async deleteBranch(name: string, options: { force?: boolean } = {}): Promise<void> {
    assertNotOption(name, 'branch');
    await this.command.run(['branch', '--quiet', options.force ? '-D' : '-d', name]);
  }

  /** True when `refs/heads/<name>` exists. */
  async branchExists(name: string): Promise<boolean> {
    assertNotOption(name, 'branch');
    const args = ['show-ref', '--verify', '--quiet', `refs/heads/${name}`];
    const result = await this.command.exec(args);
    if (result.exitCode === 0 || result.exitCode === 1) return result.exitCode === 0;
    throw this.command.failure(args, result);
  }

  /** Short names of local branches, optionally under a prefix such as `ratchet/`. */
  async listBranches(prefix = ''): Promise<string[]> {
    const output = await this.command.run(['for-each-ref', '--format=%(refname)', `refs/heads/${prefix}`]);
    return output
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^refs\/heads\//, ''));
  }

  /** Points the full ref name `ref` (`refs/notes/x-broken`) at `value`, creating it if needed. */
  async updateRef(ref: string, value: string): Promise<void> {
    assertNotOption(ref, 'ref');
    assertNotOption(value, 'ref');
    await this.command.run(['update-ref', ref, value]);
  }

  /** Deletes the full ref name `ref`; no-op when it does not exist. */
  async deleteRef(ref: string): Promise<void> {
    assertNotOption(ref, 'ref');
    await this.command.run(['update-ref', '-d', ref]);
  }

  // ---- Worktrees ----

  /**
   * Adds a worktree at `path` (resolved against `dir`). With `startPoint`, creates `branch` there
   * first (`worktree add -b`); without it, checks out the existing `branch`.
   */
  async addWorktree(path: string, branch: string, startPoint?: string): Promise<void> {
    assertNotOption(branch, 'branch');
    const target = resolve(this.dir, path);
    if (startPoint === undefined) {
      await this.command.run(['worktree', 'add', '--quiet', target, branch]);
    } else {
      assertNotOption(startPoint, 'ref');
      await this.command.run(['worktree', 'add', '--quiet', '-b', branch, target, startPoint]);
    }
  }

  /** Adds a worktree at `path` with `commit` checked out, on no branch (`--detach`). */
  async addDetachedWorktree(path: string, commit: string): Promise<void> {
    assertNotOption(commit, 'commit');
    await this.command.run(['worktree', 'add', '--quiet', '--detach', resolve(this.dir, path), commit]);
  }

  /**
   * Removes a worktree; `force` also discards its uncommitted changes (and overrides a lock).
   * Without `force`, git first runs `status --ignore-submodules=none` inside the worktree, which
   * enters its checked-out gitlinks: for a run's worktree, pass `force`.
   */
  async removeWorktree(path: string, options: { force?: boolean } = {}): Promise<void> {
    const args = ['worktree', 'remove'];
    if (options.force) args.push('--force', '--force');
    args.push(resolve(this.dir, path));
    await this.command.run(args);
  }

  /** All worktrees of the repository, the main one first. */
  async listWorktrees(): Promise<WorktreeInfo[]> {
    return parseWorktreeList(await this.command.run(['worktree', 'list', '--porcelain', '-z']));
  }

  /** Drops bookkeeping of worktrees whose directories are gone. */
  async pruneWorktrees(): Promise<void> {
    await this.command.run(['worktree', 'prune']);
  }

  // ---- History and diffs ----

  /**
   * Commits of `range` (default HEAD), newest first; `[]` when HEAD has no commits yet.
   * `range` is any revision or range git log accepts (`main..ratchet/run-1`).
   */
  async log(range?: string, options: { maxCount?: number } = {}): Promise<LogEntry[]> {
    if (range === undefined && (await this.revParse('HEAD')) === null) return [];
    const args = ['log', '--no-show-signature', LOG_FORMAT];
    if (options.maxCount !== undefined) args.push(`--max-count=${options.maxCount}`);
    if (range !== undefined) {
      assertNotOption(range, 'range');
      args.push(range);
    }
    args.push('--');
    return parseLog(await this.command.run(args));
  }

  /**
   * Unified diff (with `a/` `b/` prefixes, renames as delete + add) from `from` to `to`, or to
   * the working tree when `to` is omitted. Untracked files are not included.
   */
  async diff(from: string, to?: string): Promise<string> {
    return this.command.run(['diff', ...DIFF_FLAGS, ...revisions(from, to), '--']);
  }

  /** Per-file added/deleted line counts (`--numstat`); binary files count as 0 lines. */
  async diffStat(from: string, to?: string): Promise<DiffStat> {
    return parseNumstat(
      await this.command.run(['diff', ...DIFF_FLAGS, '--numstat', '-z', ...revisions(from, to), '--']),
    );
  }

  /** Paths changed between `from` and `to` (or the working tree), renames as delete + add. */
  async changedFiles(from: string, to?: string): Promise<string[]> {
    return splitNul(await this.command.run(['diff', ...DIFF_FLAGS, '--name-only', '-z', ...revisions(from, to), '--']));
  }

  /**
   * A reader of this repository's objects through one long-lived `git cat-file --batch` process,
   * for a caller that reads many (its owner closes it: `await using`). See `ObjectReader`.
   */
  objects(): ObjectReader {
    return this.command.objectReader();
  }

  /** Content of `path` (relative to the repository root) at `ref`, or null when it does not exist there. */
  async showFile(ref: string, path: string): Promise<string | null> {
    assertNotOption(ref, 'ref');
    // One process; a path that is missing there, or a directory (a tree), has no content.
    const blob = await this.command.exec(['cat-file', 'blob', `${ref}:${path.replace(/^\.\//, '')}`]);
    return blob.exitCode === 0 ? blob.stdout : null;
  }

  /**
   * Whether `path` is a file (a blob) at each of `refs`, from one `cat-file --batch-check` process
   * for them all.
   */
  async fileExistsAt(refs: readonly string[], path: string): Promise<boolean[]> {
    const specs = refs.map((ref) => `${ref}:${path.replace(/^\.\//, '')}`);
    // One question per line on stdin: a line break would make two.
    if (specs.some((spec) => /[\r\n]/.test(spec)))
      throw new RatchetError('git', `Invalid path: ${JSON.stringify(path)}`);
    if (specs.length === 0) return [];
    const lines = (
      await this.command.run(['cat-file', '--batch-check=%(objecttype)'], { input: `${specs.join('\n')}\n` })
    ).split('\n');
    // `blob`, or `<spec> missing` (`ambiguous`...) for what does not name one.
    return specs.map((_, index) => lines[index] === 'blob');
  }

  /** Blob ids of `paths` (repository-relative) at `ref`; paths not in that tree are absent. */
  async blobIds(ref: string, paths: readonly string[]): Promise<Map<string, string>> {
    assertNotOption(ref, 'ref');
    const ids = new Map<string, string>();
    if (paths.length === 0) return ids;
    // `<mode> <type> <object>\t<path>\0` per entry.
    for (const entry of splitNul(await this.command.run(['ls-tree', '-z', '--full-tree', ref, '--', ...paths]))) {
      const tab = entry.indexOf('\t');
      const [, type, object] = entry.slice(0, tab).split(' ');
      if (type === 'blob' && object) ids.set(entry.slice(tab + 1), object);
    }
    return ids;
  }

  /** What the index holds that differs from `commit` (`diff-index --cached --raw`), renames off. */
  async stagedChanges(commit: string): Promise<RawDiffEntry[]> {
    assertNotOption(commit, 'ref');
    return parseRawDiff(
      await this.command.run(['diff-index', '--cached', '--raw', '-z', '--no-renames', commit, '--']),
    );
  }

  /** Entries that differ between two commits (`diff-tree -r --raw`), renames off. */
  async treeChanges(from: string, to: string): Promise<RawDiffEntry[]> {
    assertNotOption(from, 'ref');
    assertNotOption(to, 'ref');
    return parseRawDiff(await this.command.run(['diff-tree', '-r', '--raw', '-z', '--no-renames', from, to, '--']));
  }

  /** The symbolic links of `commit`'s tree: path to target (the link blob's text). */
  async symlinksAt(commit: string): Promise<Map<string, string>> {
    assertNotOption(commit, 'ref');
    const links: Array<{ path: string; object: string }> = [];
    // `<mode> <type> <object>\t<path>\0` per entry.
    for (const entry of splitNul(await this.command.run(['ls-tree', '-r', '-z', '--full-tree', commit]))) {
      const tab = entry.indexOf('\t');
      const [mode, , object] = entry.slice(0, tab).split(' ');
      if (mode === '120000' && object) links.push({ path: entry.slice(tab + 1), object });
    }
    const targets = new Map<string, string>();
    if (links.length === 0) return targets;
    const result = await this.command.exec(['cat-file', '--batch'], {
      input: `${links.map((link) => link.object).join('\n')}\n`,
      binary: true,
    });
    if (result.exitCode !== 0) throw this.command.failure(['cat-file', '--batch'], result);
    const contents = parseCatFileBatch(result.stdoutBytes ?? Buffer.alloc(0));
    links.forEach((link, index) => targets.set(link.path, contents[index] ?? ''));
    return targets;
  }

  /** Puts the index entries of `paths` back to what they are in `commit` (`reset <commit> -- paths`); the work tree is left alone. */
  async resetPaths(commit: string, paths: readonly string[]): Promise<void> {
    assertNotOption(commit, 'ref');
    if (paths.length === 0) return;
    await this.command.run(['reset', '--quiet', commit, '--', ...paths], { env: { GIT_LITERAL_PATHSPECS: '1' } });
  }

  /**
   * Writes `paths` as they are in `commit` into the work tree and the index (`checkout <commit> --
   * paths`), links as links; every path must exist there.
   */
  async restorePaths(commit: string, paths: readonly string[]): Promise<void> {
    assertNotOption(commit, 'ref');
    if (paths.length === 0) return;
    await this.command.run(['checkout', '--quiet', commit, '--', ...paths], { env: { GIT_LITERAL_PATHSPECS: '1' } });
  }

  /** Of `paths`, those `commit`'s tree has (a file, a link, a directory or a gitlink). */
  async existingPaths(commit: string, paths: readonly string[]): Promise<string[]> {
    assertNotOption(commit, 'ref');
    if (paths.length === 0) return [];
    const output = await this.command.run(['ls-tree', '-z', '--full-tree', '--name-only', commit, '--', ...paths], {
      env: { GIT_LITERAL_PATHSPECS: '1' },
    });
    const listed = new Set(splitNul(output));
    return paths.filter((path) => listed.has(path));
  }

  /** The best common ancestor of two commits, or null when they have none. */
  async mergeBase(a: string, b: string): Promise<string | null> {
    assertNotOption(a, 'ref');
    assertNotOption(b, 'ref');
    const args = ['merge-base', a, b];
    const result = await this.command.exec(args);
    if (result.exitCode === 1) return null;
    if (result.exitCode !== 0) throw this.command.failure(args, result);
    return result.stdout.trim();
  }

  /** True when commit `ancestor` is an ancestor of (or equal to) `descendant`. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    assertNotOption(ancestor, 'ref');
    assertNotOption(descendant, 'ref');
    const args = ['merge-base', '--is-ancestor', ancestor, descendant];
    const result = await this.command.exec(args);
    if (result.exitCode === 0 || result.exitCode === 1) return result.exitCode === 0;
    throw this.command.failure(args, result);
  }

  // ---- Merging and patches ----

  /** Fast-forwards the current branch to `ref`; fails when that is not a fast-forward. Returns HEAD. */
  async mergeFastForward(ref: string): Promise<string> {
    assertNotOption(ref, 'ref');
    await this.command.run(['merge', '--ff-only', '--quiet', ref]);
    return this.head();
  }

  /**
   * Merges `ref` with a merge commit (`--no-ff`) and returns HEAD afterwards (unchanged when
   * `ref` is already merged). On conflict the merge is aborted and the error has
   * `details.conflict === true` and `details.files` (the conflicting paths).
   */
  async merge(ref: string, message: string): Promise<string> {
    assertNotOption(ref, 'ref');
    const args = [...(await this.commitArgs()), 'merge', '--no-ff', '--no-edit', '--quiet', '-m', message, ref];
    // The merge and the HEAD it made from one process (a tasks run merges every task).
    const result = await this.command.script('git "$@" && exec git rev-parse --verify HEAD', args);
    if (result.exitCode === 0) {
      const head = result.stdout.trim().split('\n').at(-1) ?? '';
      if (!/^[0-9a-f]{40,64}$/.test(head)) throw this.command.failure(args, result);
      return head;
    }
    if ((await this.revParse('MERGE_HEAD')) === null) throw this.command.failure(args, result);
    const files = splitNul(await this.command.run(['diff', ...DIFF_FLAGS, '--name-only', '-z', '--diff-filter=U']));
    await this.command.run(['merge', '--abort']);
    throw this.command.failure(args, result, {
      details: { conflict: true, files },
      hint: `Merging ${ref} conflicts in ${files.join(', ') || 'the working tree'}; the merge was aborted.`,
    });
  }

  /** `git apply --check` of `patchText`: whether it applies to the working tree, and why not. */
  async applyCheck(patchText: string): Promise<ApplyCheckResult> {
    const result = await this.command.exec(['apply', '--check', '-'], {
      input: patchText,
    });
    return result.exitCode === 0 ? { ok: true, error: '' } : { ok: false, error: result.stderr.trim() };
  }

  /** Applies `patchText` to the working tree (not the index); all or nothing. */
  async apply(patchText: string): Promise<void> {
    await this.command.run(['apply', '-'], { input: patchText });
  }

  /** `git bundle create <file> --all`; `file` is resolved against `dir`. */
  async bundleCreate(file: string): Promise<void> {
    await this.command.run(['bundle', 'create', '--quiet', resolve(this.dir, file), '--all']);
  }

  /** The refs a bundle holds (`git bundle list-heads`): full ref name to sha. */
  async bundleHeads(file: string): Promise<Map<string, string>> {
    const heads = new Map<string, string>();
    const output = await this.command.run(['bundle', 'list-heads', resolve(this.dir, file)]);
    for (const line of output.split('\n')) {
      const [sha, ref] = line.trim().split(/\s+/);
      if (sha && ref) heads.set(ref, sha);
    }
    return heads;
  }

  /**
   * Sets the full ref name `ref` here to what it is in the bundle `file` (forced; allowed for the
   * checked-out branch). The only transport Ratchet's git ever allows: `file`, for this fetch.
   */
  async fetchFromBundle(file: string, ref: string): Promise<void> {
    checkedRefPath(ref);
    await this.command.run(
      ['fetch', '--quiet', '--no-recurse-submodules', '--update-head-ok', resolve(this.dir, file), `+${ref}:${ref}`],
      { env: { GIT_ALLOW_PROTOCOL: 'file' } },
    );
  }

  /**
   * Sets the full ref name `to` here to the remote's `from` (forced) from the repository at `url`
   * (a path, `file://`, `ssh://` or `https://`: the transports `ratchet tasks run --queue` publishes
   * through; every other one stays refused). Fails when the remote lacks `from`.
   */
  async fetchRef(url: string, from: string, to: string): Promise<void> {
    assertNotOption(url, 'url');
    checkedRefPath(from);
    checkedRefPath(to);
    await this.command.run(['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', url, `+${from}:${to}`], {
      env: { GIT_ALLOW_PROTOCOL: QUEUE_PROTOCOLS },
    });
  }

  /** Sets the remote's full ref name `to` at `url` to `from` here (forced); the transports of `fetchRef`. */
  async pushRef(url: string, from: string, to: string): Promise<void> {
    assertNotOption(url, 'url');
    assertNotOption(from, 'ref');
    checkedRefPath(to);
    await this.command.run(['push', '--quiet', '--no-verify', url, `+${from}:${to}`], {
      env: { GIT_ALLOW_PROTOCOL: QUEUE_PROTOCOLS },
    });
  }

  // ---- Notes (failures have code `notes`) ----

  /** Sets the note on `commit` under `ref` (`tdd-handoffs` or `refs/notes/...`), replacing any. */
  async writeNote(ref: string, commit: string, text: string): Promise<void> {
    await notes.writeNote(this.command, await this.commitArgs(), ref, commit, text);
  }

  /** The note on `commit`, or null when it has none; a corrupt notes ref throws `notes`. */
  async readNote(ref: string, commit: string): Promise<string | null> {
    return notes.readNote(this.command, ref, commit);
  }

  /** Every note under `ref` (empty when the ref does not exist). */
  async listNotes(ref: string): Promise<NoteEntry[]> {
    return notes.listNotes(this.command, ref);
  }

  /** Removes the note on `commit`; no-op when it has none. */
  async removeNote(ref: string, commit: string): Promise<void> {
    await notes.removeNote(this.command, await this.commitArgs(), ref, commit);
  }
}

/** The transports a tasks run's published repository may use (no `ext::`, no `git://`). */
const QUEUE_PROTOCOLS = 'file:ssh:https';

/** A work tree's own git directory and the common one (equal for the main checkout), absolute. */
export interface GitDirs {
  gitDir: string;
  commonDir: string;
}

export type { BatchObject, ObjectReader } from './internal/object-reader.js';

/** Lock files of a linked worktree's private git directory that an interrupted git may leave. */
const WORKTREE_LOCK_FILES = ['index.lock', 'HEAD.lock', 'ORIG_HEAD.lock'];

/** A full ref name as a relative path under the common git directory; refuses anything else. */
function checkedRefPath(ref: string): string {
  assertNotOption(ref, 'ref');
  const parts = ref.split('/');
  const unsafe = (part: string): boolean => part === '' || part === '.' || part === '..' || part.endsWith('.lock');
  if (parts[0] !== 'refs' || parts.length < 3 || parts.some(unsafe)) {
    throw new RatchetError('git', `Invalid ref '${ref}': a full ref name under refs/ is expected.`);
  }
  return parts.join(sep);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function revisions(from: string, to: string | undefined): string[] {
  assertNotOption(from, 'ref');
  if (to === undefined) return [from];
  assertNotOption(to, 'ref');
  return [from, to];
}
