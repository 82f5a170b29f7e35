import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { UnsafeEntry } from '../../src/core/unsafe-entry.js';
import { diskLinkReader, linkEscape } from '../../src/git/unsafe-entries.js';
import { RatchetError } from '../../src/core/errors.js';
import { HandoffStateSchema, type HandoffState } from '../../src/core/handoff.js';
import type { Workspace } from '../../src/workflows/tdd/ports.js';

export type FileMap = ReadonlyMap<string, string>;

export interface FakeCommit {
  sha: string;
  subject: string;
  body: string | undefined;
  /** The whole tree at this commit. */
  files: FileMap;
}

function shaOf(index: number, subject: string): string {
  return createHash('sha1').update(`${index}\0${subject}`).digest('hex');
}

function sameTree(a: FileMap, b: FileMap): boolean {
  if (a.size !== b.size) return false;
  for (const [path, text] of a) if (b.get(path) !== text) return false;
  return true;
}

/** Paths whose content differs between two trees (added, removed or changed), sorted. */
function diffPaths(a: FileMap, b: FileMap): string[] {
  const paths = new Set<string>();
  for (const [path, text] of a) if (b.get(path) !== text) paths.add(path);
  for (const path of b.keys()) if (!a.has(path)) paths.add(path);
  return [...paths].sort();
}

/** A `Workspace` over an in-memory tree (mirrored on disk), mirroring git's semantics. */
export class FakeWorkspace implements Workspace {
  readonly root: string;
  /** The branch, oldest first; the last commit is HEAD. */
  readonly commits: FakeCommit[] = [];
  /** Handoff notes by commit; like git notes, they outlive commits dropped by a reset. */
  readonly notes = new Map<string, HandoffState>();
  /** Every `writeNote`, in order. */
  readonly noteWrites: { commit: string; state: HandoffState }[] = [];
  /** Every call that changed the branch or the tree wholesale, in order. */
  readonly operations: string[] = [];
  private files = new Map<string, string>();
  private commitCounter = 0;

  private constructor(root: string) {
    this.root = root;
  }

  /** A workspace in a fresh temporary directory whose first commit (`initial`) holds `files`. */
  static async create(files: Record<string, string> = { 'README.md': '# demo\n' }): Promise<FakeWorkspace> {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-fake-ws-')));
    const workspace = new FakeWorkspace(root);
    for (const [path, text] of Object.entries(files)) await workspace.writeFile(path, text);
    await workspace.checkpoint('initial', { allowEmpty: true });
    workspace.operations.length = 0;
    return workspace;
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  // --- Workspace ---

  /** Nothing is cached here; counted so tests can see the workflow refresh after agents. */
  refreshes = 0;
  refresh(): void {
    this.refreshes++;
  }

  head(): Promise<string> {
    return Promise.resolve(this.headCommit().sha);
  }

  async checkpoint(
    subject: string,
    options: { allowEmpty?: boolean; body?: string; note?: HandoffState } = {},
  ): Promise<string> {
    const parent = this.commits.at(-1);
    if (parent !== undefined && sameTree(parent.files, this.files) && options.allowEmpty !== true) {
      throw new RatchetError('git', `Nothing to commit for "${subject}"`);
    }
    const sha = shaOf(this.commitCounter++, subject);
    this.commits.push({ sha, subject, body: options.body, files: new Map(this.files) });
    this.operations.push(`checkpoint ${subject}`);
    if (options.note) await this.writeNote(sha, options.note);
    return sha;
  }

  hasChanges(): Promise<boolean> {
    return Promise.resolve(!sameTree(this.headCommit().files, this.files));
  }

  async discardChanges(): Promise<void> {
    this.operations.push('discard');
    await this.replaceTree(this.headCommit().files);
  }

  async resetTo(commit: string): Promise<void> {
    const index = this.indexOf(commit);
    this.operations.push(`reset ${this.subjectOf(commit)}`);
    this.commits.splice(index + 1);
    await this.replaceTree(this.headCommit().files);
  }

  uncommitTo(commit: string): Promise<void> {
    const index = this.indexOf(commit);
    this.operations.push(`uncommit ${this.subjectOf(commit)}`);
    this.commits.splice(index + 1);
    return Promise.resolve();
  }

  changedFilesSince(commit: string): Promise<string[]> {
    const base = this.commits[this.indexOf(commit)];
    return Promise.resolve(base === undefined ? [] : diffPaths(base.files, this.files));
  }

  writeNote(commit: string, state: HandoffState): Promise<void> {
    if (!this.commits.some((entry) => entry.sha === commit)) {
      return Promise.reject(new RatchetError('notes', `No such commit for a note: ${commit}`));
    }
    // The note is JSON in git: keep a round-tripped, schema-checked copy.
    const stored = HandoffStateSchema.parse(JSON.parse(JSON.stringify(state)));
    this.notes.set(commit, stored);
    this.noteWrites.push({ commit, state: stored });
    return Promise.resolve();
  }

  readFile(path: string): Promise<string | null> {
    return Promise.resolve(this.files.get(path) ?? null);
  }

  readFileAt(commit: string, path: string): Promise<string | null> {
    return Promise.resolve(this.commits[this.indexOf(commit)]?.files.get(path) ?? null);
  }

  async writeFile(path: string, text: string): Promise<void> {
    this.files.set(path, text);
    const target = join(this.root, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
  }

  async removeFile(path: string): Promise<void> {
    this.files.delete(path);
    await rm(join(this.root, path), { force: true });
  }

  /**
   * The in-memory tree holds regular files only, so links and nested repositories are looked for
   * on disk, wherever they are (`paths` names the changed files, which a link made on disk is not
   * one of here). There is no index: no gitlinks.
   */
  async unsafeEntries(_paths: readonly string[]): Promise<UnsafeEntry[]> {
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true });
    const found: UnsafeEntry[] = [];
    for (const entry of entries) {
      const path = relative(this.root, join(entry.parentPath, entry.name));
      if (entry.isSymbolicLink()) {
        const escape = await linkEscape(path, diskLinkReader(this.root));
        if (escape !== null) found.push({ kind: 'link-outside', path, detail: escape });
      } else if (entry.name === '.git') {
        found.push({ kind: 'nested-repository', path: relative(this.root, entry.parentPath), detail: '.git exists' });
      }
    }
    return found.sort((a, b) => a.path.localeCompare(b.path));
  }

  /**
   * Removes the links and nested repositories on disk, which the in-memory tree never held; what
   * the tree has at or below such a path is written back on disk.
   */
  async removeUnsafeEntries(entries: readonly UnsafeEntry[], _commit: string): Promise<void> {
    for (const entry of entries) {
      await rm(join(this.root, entry.path), { recursive: true, force: true });
      for (const [path, text] of this.files) {
        if (path !== entry.path && !path.startsWith(`${entry.path}/`)) continue;
        await mkdir(dirname(join(this.root, path)), { recursive: true });
        await writeFile(join(this.root, path), text);
      }
    }
  }

  // --- helpers for fakes and assertions ---

  /** A symbolic link on disk only (the in-memory tree keeps regular files). */
  async linkOnDisk(path: string, target: string): Promise<void> {
    await mkdir(dirname(join(this.root, path)), { recursive: true });
    await symlink(target, join(this.root, path));
  }

  /** Whether `path` is a symbolic link on disk. */
  async isLinkOnDisk(path: string): Promise<boolean> {
    return (await lstat(join(this.root, path)).catch(() => null))?.isSymbolicLink() ?? false;
  }

  /** The working tree now. */
  tree(): FileMap {
    return new Map(this.files);
  }

  /** A file's current content (synchronously, for assertions). */
  file(path: string): string | undefined {
    return this.files.get(path);
  }

  headCommit(): FakeCommit {
    const head = this.commits.at(-1);
    if (head === undefined) throw new Error('FakeWorkspace: no commits');
    return head;
  }

  /** Commit subjects, oldest first. */
  subjects(): string[] {
    return this.commits.map((commit) => commit.subject);
  }

  /** The commit with this subject (the last one when several share it). */
  commitWithSubject(subject: string): FakeCommit {
    const found = this.commits.findLast((commit) => commit.subject === subject);
    if (found === undefined)
      throw new Error(`FakeWorkspace: no commit "${subject}" in ${JSON.stringify(this.subjects())}`);
    return found;
  }

  /** The handoff note on a commit; throws when there is none. */
  noteOn(commit: string): HandoffState {
    const note = this.notes.get(commit);
    if (note === undefined) throw new Error(`FakeWorkspace: no note on ${this.subjectOf(commit)}`);
    return note;
  }

  headNote(): HandoffState {
    return this.noteOn(this.headCommit().sha);
  }

  private indexOf(commit: string): number {
    const index = this.commits.findIndex((entry) => entry.sha === commit);
    if (index < 0) throw new RatchetError('git', `Unknown commit ${commit}`);
    return index;
  }

  private subjectOf(commit: string): string {
    return this.commits.find((entry) => entry.sha === commit)?.subject ?? commit;
  }

  private async replaceTree(target: FileMap): Promise<void> {
    for (const path of [...this.files.keys()]) if (!target.has(path)) await this.removeFile(path);
    for (const [path, text] of target) if (this.files.get(path) !== text) await this.writeFile(path, text);
  }
}
