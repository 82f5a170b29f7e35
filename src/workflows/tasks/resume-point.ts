import type { Git } from '../../git/git.js';
import type { Ledger } from '../../ledger/types.js';
import type { ResumePoint, RunInfo } from '../definition.js';

/**
 * Where a stopped tasks run continues: at the newest commit of the run branch (first parents
 * only) that the ledger records as a task's merge. A merge the coordinator made but did not
 * record (killed while the full suite ran after it) comes after that point and is dropped by the
 * engine; its task, recorded `done` with its branch, merges again on resume. So no merge is ever
 * on the branch twice, and none is kept that the suite did not pass.
 */
export async function findTasksResumePoint(
  git: Git,
  run: Pick<RunInfo, 'id' | 'baseCommit'>,
  ledger: Ledger,
): Promise<ResumePoint> {
  const merges = new Set(
    (await ledger.tasks.tasks(run.id)).flatMap((task) =>
      task.status === 'merged' && task.mergeCommit !== null ? [task.mergeCommit] : [],
    ),
  );
  let commit = await git.head();
  let dropped = 0;
  while (commit !== run.baseCommit && !merges.has(commit)) {
    const parent = await git.revParse(`${commit}^1`);
    if (parent === null) break;
    commit = parent;
    dropped += 1;
  }
  return { commit, note: null, dropped, checkpoints: [] };
}
