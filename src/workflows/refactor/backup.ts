import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import type { ProcessRunner } from '../../process/types.js';

/** What a backup holds, stored under `$RATCHET_HOME/backups/<repo>/<run-id>/`. */
export interface Backup {
  directory: string;
  /** `git bundle create --all` of the repository (null when it has no commits). */
  bundle: string | null;
  /** `tar.gz` of the working directory (without .git, dependencies and .ratchet). */
  snapshot: string;
}

const SNAPSHOT_EXCLUDES = ['./.git', './node_modules', './.ratchet', './.venv', './venv'];

export function backupDirectory(home: string, repoRoot: string, runId: string): string {
  return join(home, 'backups', basename(repoRoot), runId);
}

/** Seed 002, 8.1: a full, revertable backup before anything changes. */
export async function createBackup(
  repoRoot: string,
  directory: string,
  runner: ProcessRunner,
  options: { git: boolean },
): Promise<Backup> {
  await mkdir(directory, { recursive: true });
  let bundle: string | null = null;
  if (options.git) {
    const git = new Git(repoRoot);
    if ((await git.revParse('HEAD')) !== null) {
      bundle = join(directory, 'backup.bundle');
      await git.bundleCreate(bundle);
    }
  }
  const snapshot = join(directory, 'snapshot.tar.gz');
  const result = await runner.run({
    command: 'tar',
    args: ['-czf', snapshot, ...SNAPSHOT_EXCLUDES.flatMap((pattern) => ['--exclude', pattern]), '-C', repoRoot, '.'],
    shell: false,
    cwd: repoRoot,
  });
  if (result.exitCode !== 0)
    throw new RatchetError('internal', `Could not write the backup snapshot: ${result.output.slice(-500)}`);
  return { directory, bundle, snapshot };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Restores the repository as it was when the run started: the branch the run started from goes
 * back to its backed-up commit (other branches, which the run never touched, stay as they are),
 * the checkout is reset to it, and the working directory's files are replaced by the snapshot
 * (files the snapshot lacks are removed, except .git, dependencies and .ratchet).
 */
export async function restoreBackup(
  repoRoot: string,
  backup: Backup,
  runner: ProcessRunner,
  options: { branch: string | null },
): Promise<void> {
  if (!(await exists(backup.snapshot)))
    throw new RatchetError('not-found', `The backup snapshot ${backup.snapshot} is missing.`);
  if (backup.bundle && (await exists(backup.bundle))) {
    const git = new Git(repoRoot);
    const heads = await git.bundleHeads(backup.bundle);
    const ref = options.branch === null ? null : `refs/heads/${options.branch}`;
    if (ref !== null && heads.has(ref)) await git.fetchFromBundle(backup.bundle, ref);
    if (options.branch) await git.checkout(options.branch);
    await git.resetHard('HEAD');
  }
  const keep = new Set(['.git', 'node_modules', '.ratchet', '.venv', 'venv']);
  for (const entry of await readdir(repoRoot)) {
    if (!keep.has(entry)) await rm(join(repoRoot, entry), { recursive: true, force: true });
  }
  const extracted = await runner.run({
    command: 'tar',
    args: ['-xzf', backup.snapshot, '-C', repoRoot],
    shell: false,
    cwd: repoRoot,
  });
  if (extracted.exitCode !== 0)
    throw new RatchetError('internal', `Could not extract ${backup.snapshot}: ${extracted.output.slice(-500)}`);
}
