import { lstat, mkdir, readFile, rename, rm, rmdir, stat, writeFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { normaliseDeclaredPath, pathEscapeReason } from './patch-paths.js';
import {
  applySearchReplace,
  type SearchReplaceBlock,
  type SearchReplaceFailure,
  type SearchReplaceFailureKind,
} from './search-replace.js';

/**
 * Applies a step's search/replace edits (seed 004, `apply_edits`) to a directory, all or none:
 * every edit is checked against the files in memory first (each SEARCH must match exactly once,
 * see `applySearchReplace`), so a failing edit leaves every file as it was; then each changed
 * file is written to a temporary file beside it and renamed over it. The result can undo the
 * whole step (`rollback`), e.g. when its tests fail.
 *
 * Paths are the model's: each must stay inside the directory (no `..`, no absolute path, nothing
 * in `.git`), and none may pass through a symbolic link, which could lead outside it.
 */

type EditFailureKind = SearchReplaceFailureKind | 'unsafe-path' | 'not-a-text-file';

interface EditFailure extends Omit<SearchReplaceFailure, 'kind'> {
  kind: EditFailureKind;
}

export type DirectoryEditResult =
  | {
      ok: true;
      /** Files changed or created, in the order of their first edit. */
      files: string[];
      created: string[];
      /** Puts every file back as it was before (created files and directories removed). */
      rollback(): Promise<void>;
    }
  | { ok: false; failures: EditFailure[] };

type Original = { kind: 'absent'; createdDirectories: string[] } | { kind: 'file'; content: Buffer; mode: number };

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Why the model may not edit `path` under `root` (null when it may). */
async function pathProblem(root: string, path: string): Promise<{ kind: EditFailureKind; reason: string } | null> {
  const escape = pathEscapeReason(path);
  if (escape !== null) return { kind: 'unsafe-path', reason: `refused: ${escape}` };
  const segments = path.split('/');
  for (let depth = 1; depth <= segments.length; depth++) {
    const partial = join(root, ...segments.slice(0, depth));
    const stats = await lstat(partial).catch(() => null);
    if (stats === null) return null;
    if (stats.isSymbolicLink())
      return { kind: 'unsafe-path', reason: `refused: ${segments.slice(0, depth).join('/')} is a symbolic link` };
    if (depth === segments.length && !stats.isFile())
      return { kind: 'not-a-text-file', reason: 'it is not a regular file' };
  }
  return null;
}

/** The directories `mkdir -p` would create for `file`, deepest first. */
async function missingDirectories(root: string, file: string): Promise<string[]> {
  const missing: string[] = [];
  for (let directory = dirname(file); directory.length > root.length; directory = dirname(directory)) {
    if (!(await exists(directory))) missing.push(directory);
  }
  return missing;
}

async function writeAtomically(file: string, content: string, mode: number | undefined): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = join(dirname(file), `.ratchet-edit-${process.pid}-${Date.now()}.tmp`);
  try {
    await writeFile(temporary, content, { flag: 'wx' });
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Newest first: a directory created for an earlier file is removed once the later files in it are. */
async function restore(root: string, originals: ReadonlyMap<string, Original>): Promise<void> {
  for (const [path, original] of [...originals].reverse()) {
    const file = join(root, path);
    if (original.kind === 'file') {
      await writeFile(file, original.content);
      await chmod(file, original.mode);
    } else {
      await rm(file, { force: true });
      for (const directory of original.createdDirectories) await rmdir(directory).catch(() => undefined);
    }
  }
}

/** Applies `blocks` to the files under `root`, all or none. Throws only when writing fails (then nothing changed). */
export async function applyEditsToDirectory(
  root: string,
  blocks: readonly SearchReplaceBlock[],
): Promise<DirectoryEditResult> {
  const normalised = blocks.map((block) => ({ ...block, path: normaliseDeclaredPath(block.path) }));
  const paths = [...new Set(normalised.map((block) => block.path))];
  const failures: EditFailure[] = [];
  const texts = new Map<string, string>();
  for (const path of paths) {
    const problem = await pathProblem(root, path);
    let text: string | undefined;
    if (problem === null && (await exists(join(root, path)))) {
      text = await readFile(join(root, path), 'utf8');
      if (text.includes('\0')) text = undefined;
    }
    const reason =
      problem?.reason ?? (text === undefined && (await exists(join(root, path))) ? 'it is a binary file' : null);
    if (reason !== null) {
      const block = normalised.findIndex((candidate) => candidate.path === path);
      failures.push({
        block,
        path,
        kind: problem?.kind ?? 'not-a-text-file',
        matches: 0,
        message: `Edit ${block + 1} (${path}): ${reason}; edit text files inside the repository only.`,
      });
    } else if (text !== undefined) texts.set(path, text);
  }
  if (failures.length > 0) return { ok: false, failures };
  const applied = applySearchReplace(texts, normalised);
  if (!applied.ok) return { ok: false, failures: applied.failures };

  const originals = new Map<string, Original>();
  const created: string[] = [];
  try {
    for (const [path, content] of applied.files) {
      const file = join(root, path);
      const before = texts.has(path) ? await stat(file) : null;
      if (before === null) {
        originals.set(path, { kind: 'absent', createdDirectories: await missingDirectories(root, file) });
        created.push(path);
      } else {
        originals.set(path, { kind: 'file', content: await readFile(file), mode: before.mode & 0o7777 });
      }
      await writeAtomically(file, content, before === null ? undefined : before.mode & 0o7777);
    }
  } catch (error) {
    await restore(root, originals).catch(() => undefined);
    throw new RatchetError(
      'internal',
      `Could not write the edited files: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
        hint: 'Check the free disk space and the permissions of the worktree.',
      },
    );
  }
  return { ok: true, files: [...applied.files.keys()], created, rollback: () => restore(root, originals) };
}
