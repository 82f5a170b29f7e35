/**
 * What the end-to-end `ratchet tdd` tests share on top of e2e-run.ts: one `ratchet tdd --json`
 * run read back once for a whole test file, and builders for what they expect of it (commit
 * subjects, handoff notes, stage rows, the test list).
 */
import { expect } from 'vitest';
import type { HandoffState } from '../../src/core/handoff.js';
import type { StageRow } from '../../src/ledger/types.js';
import {
  checkoutState,
  checkpointsOf,
  readLedger,
  type CheckoutState,
  type Checkpoint,
  type LedgerSnapshot,
  type ProjectRepo,
} from './e2e-run.js';
import { describeResult, parseNdjson, runCli, type CliResult, type JsonLine, type RunCliOptions } from './run-cli.js';

/** One `ratchet tdd --json` run and what it left behind. */
export interface TddRun {
  /** The user's checkout before the run. */
  before: CheckoutState;
  result: CliResult;
  events: JsonLine[];
  /** From the `run-start` event (a placeholder that matches nothing when there was none). */
  runId: string;
  /** The commits of `ratchet/<runId>` since `before.head`, with their handoff notes. */
  commits: Checkpoint[];
  ledger: LedgerSnapshot;
}

/** Runs `ratchet tdd <args> --json` in `repo` and reads back its events, commits and ledger rows. */
export async function runTdd(
  repo: ProjectRepo,
  args: readonly string[],
  options: Omit<RunCliOptions, 'cwd'>,
): Promise<TddRun> {
  const before = checkoutState(repo);
  const result = await runCli(['tdd', ...args, '--json'], { ...options, cwd: repo.dir });
  const events = parseNdjson(result.stdout);
  const start = events.find((event) => event.type === 'run-start');
  const runId = typeof start?.runId === 'string' ? start.runId : '(no run-start event)';
  const commits = checkpointsOf(repo, before.head, `ratchet/${runId}`);
  return { before, result, events, runId, commits, ledger: await readLedger(repo.dir, runId) };
}

/** Expects the run to have exited 0 with the brain answering every request from its script, all of it. */
export function expectPlayedAsScripted(
  brain: { readonly unexpected: readonly string[]; unplayed(): readonly string[] },
  result: CliResult,
): void {
  expect(brain.unexpected).toEqual([]);
  expect(result.exitCode, describeResult(result)).toBe(0);
  expect(brain.unplayed()).toEqual([]);
}

/** The commit subjects of one cycle on `item`; unless `refactored`, REFACTOR changed nothing. */
export function cycleSubjects(item: string, refactored: boolean): string[] {
  return [
    `plan: ${item}`,
    `test: ${item}`,
    `feat: ${item}`,
    refactored ? `refactor: ${item}` : 'refactor: no changes needed',
  ];
}

/** The fields of a handoff note the e2e tests compare (all but `errorDetails`). */
export type ComparedNote = Omit<HandoffState, 'errorDetails'>;

/** The compared fields of `note`. */
export function comparedNote(note: HandoffState): ComparedNote {
  const { errorDetails: _details, ...compared } = note;
  return compared;
}

/**
 * Builds the expected notes of run `runId` over `items`: `test` is the item of the cycle, `done`
 * the items checked by then (the rest are pending), `retryCount` the attempts before the one that
 * committed.
 */
export function noteBuilder(
  runId: string,
  items: readonly string[],
  files: { testFile: string; implFile: string },
): (
  phase: HandoffState['phase'],
  nextPhase: HandoffState['nextPhase'],
  cycle: number,
  test: string | null,
  done: string[],
  testResult: HandoffState['testResult'],
  retryCount?: number,
) => ComparedNote {
  return (phase, nextPhase, cycle, test, done, testResult, retryCount = 0) => ({
    phase,
    nextPhase,
    cycleNumber: cycle,
    currentTest: test === null ? null : { description: test, ...files },
    completedTests: done,
    pendingTests: items.filter((item) => !done.includes(item)),
    testResult,
    retryCount,
    error: null,
    runId,
  });
}

/** `cycle stage#attempt outcome`, with the reason of a rejection or of `no changes`. */
export function stageLine(row: StageRow): string {
  const reason = row.outcome === 'rejected' || row.reason === 'no changes' ? ` ${row.reason ?? ''}` : '';
  return `${row.cycle} ${row.stage}#${row.attempt} ${row.outcome ?? 'open'}${reason}`;
}

/** The checkbox lines of test-list.md on `branch`. */
export function testListItems(repo: ProjectRepo, branch: string): string[] {
  return repo
    .run('show', `${branch}:test-list.md`)
    .split('\n')
    .filter((line) => line.startsWith('- ['));
}
