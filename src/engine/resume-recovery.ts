import type { EventMap, RatchetEvent } from '../core/events.js';
import type { Ledger } from '../ledger/types.js';
import type { ResumePoint } from '../workflows/definition.js';
import { ledgerNotes } from './checkpoints.js';
import type { GitRun } from './git-run.js';
import type { Recorder } from './recorder.js';

/**
 * Records in the ledger what a killed process left out of it of the checkpoints it made: for each
 * commit the workflow's resume point found (oldest first, the checkpoint the run resumes from
 * last), its `checkpoint-create` and its `note-write` when the ledger lacks them (a kill between
 * the commit and note and their events, or between the two events), and the stage attempt that
 * made it, when still open, as accepted (`resume` would otherwise end it as interrupted). The
 * stage is read from the ledger's attempts of the note's cycle, phase and attempt among the stages
 * that make a checkpoint of its phase (RED or RED_FIX, say). The checkpoint the run resumes from
 * gets `resumedFields` (a replayed run: the cassette position it resumes at). A checkpoint
 * without a handoff note (a workflow keeping its own progress notes) gets its `checkpoint-create`
 * only. Returns the notices for the terminal (recorded too), one per checkpoint whose
 * `checkpoint-create` or `note-write` was missing.
 */
export async function recordCheckpointsLeftOut(
  run: GitRun,
  point: ResumePoint,
  ledger: Ledger,
  record: Recorder,
  resumedFields: Pick<EventMap['checkpoint-create'], 'cassette'>,
): Promise<RatchetEvent[]> {
  const recorded = new Set((await ledger.checkpoints(run.id)).map((row) => row.commitSha));
  const noted = await ledgerNotes(ledger, run.id);
  const attempts = await ledger.stages(run.id);
  /** Attempts this function closed: still open in `attempts`, read before it recorded their end. */
  const closed = new Set<number>();
  const isOpen = (row: (typeof attempts)[number]): boolean => row.endedAt === null && !closed.has(row.id);
  const notices: RatchetEvent[] = [];
  for (const checkpoint of point.checkpoints) {
    if (checkpoint.note === null) {
      // A workflow with progress notes of its own (solve): only the checkpoint can be missing.
      const { sha, subject, stage, phase } = checkpoint;
      if (recorded.has(sha)) continue;
      await record({
        type: 'checkpoint-create',
        stage,
        phase,
        commit: sha,
        subject,
        ...(sha === point.commit ? resumedFields : {}),
      });
      notices.push(await record({ type: 'warning', message: leftOutMessage(sha, subject, 'the checkpoint') }));
      continue;
    }
    const { note: state, sha, subject, stages } = checkpoint;
    const phase = state.phase;
    const rows = attempts.filter(
      (row) =>
        row.cycle === state.cycleNumber &&
        row.phase === phase &&
        row.attempt === state.retryCount + 1 &&
        stages.includes(row.stage),
    );
    const made = rows.findLast(isOpen) ?? rows.at(-1);
    const stage = made?.stage ?? stages[0] ?? 'PLAN';
    const done: string[] = [];
    if (!recorded.has(sha)) {
      await record({
        type: 'checkpoint-create',
        stage,
        phase,
        commit: sha,
        subject,
        ...(sha === point.commit ? resumedFields : {}),
      });
      done.push('the checkpoint');
    }
    if (!noted.has(sha)) {
      await record({ type: 'note-write', commit: sha, state });
      done.push('its handoff note');
    }
    // An attempt left open after a checkpoint the ledger has in full is closed silently, as
    // `resume` closes every attempt a killed process left open (but as accepted: it made the checkpoint).
    const silent = done.length === 0;
    if (made !== undefined && isOpen(made)) {
      closed.add(made.id);
      const { cycle, attempt } = made;
      const reason = 'checkpoint recorded by resume';
      await record({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'accepted', reason });
      done.push(`its ${stage} attempt ${attempt} as accepted`);
    }
    if (silent) continue;
    const what = done.length === 1 ? (done[0] ?? '') : `${done.slice(0, -1).join(', ')} and ${done.at(-1) ?? ''}`;
    notices.push(await record({ type: 'warning', message: leftOutMessage(sha, subject, what) }));
  }
  return notices;
}

function leftOutMessage(sha: string, subject: string, recorded: string): string {
  return `Checkpoint ${sha.slice(0, 8)} (${subject}) was made, but the process stopped before the ledger recorded all of it: recorded ${recorded}.`;
}

/**
 * The stage attempts a killed process left open (no `stage-end`): they ended with it. Recorded
 * (as errors, `interrupted`), not shown.
 */
export async function closeAttemptsLeftOpen(run: GitRun, ledger: Ledger, record: Recorder): Promise<void> {
  for (const row of await ledger.stages(run.id)) {
    if (row.endedAt !== null) continue;
    const { stage, phase, cycle, attempt } = row;
    await record({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'error', reason: 'interrupted' });
  }
}
