/**
 * End to end: what `status`, `history`, `report` and `reject` say about a finished run (the demo's,
 * on a real repository): aligned history columns however long a subject is, a killed run's status
 * line, a second `reject` refused like a second `accept`, the handoff notes a reject removed
 * from git still shown, from the ledger (and not written back by `repair-notes`), and a `rollback`
 * to a checkpoint of another run naming that run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTES_REF } from '../../src/core/handoff.js';
import { openLedger } from '../../src/ledger/ledger.js';
import {
  assertFreshBuild,
  describeResult,
  PACKAGE_ROOT,
  parseNdjson,
  runCli,
  type CliResult,
} from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let dir = '';
let repoDir = '';
let runId = '';
let env: Record<string, string> = {};

async function ratchet(...args: string[]): Promise<CliResult> {
  return runCli(args, { cwd: repoDir, env });
}

/** Sets the run's status in the ledger, as a process that died mid-run leaves it (`running`). */
async function setStatus(status: 'running' | 'completed'): Promise<void> {
  const ledger = await openLedger(join(repoDir, '.ratchet', 'ledger.db'), { secrets: [] });
  try {
    await ledger.updateRun(runId, { status });
  } finally {
    await ledger.close();
  }
}

/** The checkpoint lines of `ratchet history` (they start with an abbreviated commit). */
function handoffLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^ {2}[0-9a-f]{8} {2}/.test(line));
}

beforeAll(async () => {
  assertFreshBuild();
  dir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-e2e-inspect-')));
  const home = join(dir, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
  const demo = await runCli(['demo', '--dir', join(dir, 'demo')], { cwd: dir, env });
  expect(demo.exitCode, describeResult(demo)).toBe(0);
  repoDir = join(dir, 'demo', 'stack-kata');
  const status = await ratchet('status', '--json');
  runId = (JSON.parse(status.stdout) as { run: { id: string } }).run.id;
}, 90_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The subject is reading runs back: where bubblewrap is missing the extra runs opt out (the demo does by itself). */
const sandbox = sandboxForThisMachine();

describe(`status, history, report and reject of a finished run (built CLI, subprocess)${sandbox.note}`, () => {
  it('history keeps its columns in line when a subject is longer than the others', async () => {
    const history = await ratchet('history');
    expect(history.exitCode, describeResult(history)).toBe(0);
    const lines = handoffLines(history.stdout);
    expect(lines).toHaveLength(17);
    // The demo has subjects of many lengths; one is over 52 characters.
    const long = 'refactor: pop returns items in last-in-first-out order';
    expect(lines.some((line) => line.endsWith(long))).toBe(true);
    const column = (line: string, text: string): number => line.indexOf(text);
    const cycles = new Set(lines.map((line) => column(line, 'cycle ')));
    expect([...cycles], history.stdout).toHaveLength(1);
    // The subject comes last, at the same column on every line.
    const subjects = new Set(
      lines.map((line) => column(line, line.match(/(plan|test|feat|refactor): .*$/)?.[0] ?? '')),
    );
    expect([...subjects], history.stdout).toHaveLength(1);
    expect(history.stdout).toMatch(new RegExp(`^ {2}${runId} {2}completed {2}tdd {2}A stack`, 'm'));
  });

  it('status counts every stage outcome and says when a run is left running by a killed process', async () => {
    const status = await ratchet('status');
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(status.stdout.split('\n')[0]).toBe(`Run ${runId} (tdd)  completed`);
    // 26 stage attempts and the static review of each of the 4 tests RED accepted (REVIEW_TESTS).
    expect(status.stdout).toContain('  stages    30 attempts (26 accepted, 4 rejected)\n');
    // A replayed cassette costs nothing: a known $0.
    expect(status.stdout).toMatch(/ {2}model {5}34 calls, 0 in \/ 0 out tokens, cost \$0\.0000\n/);
    const report = await ratchet('report');
    expect(report.stdout).toContain('| Cost | $0.0000 |');
    expect(report.stdout).toContain('| Stage attempts | 30: 26 accepted, 4 rejected |');

    await setStatus('running');
    try {
      const killed = await ratchet('status');
      expect(killed.exitCode, describeResult(killed)).toBe(0);
      expect(killed.stdout.split('\n').slice(0, 2)).toEqual([
        `Run ${runId} (tdd)  running, but its process is gone (killed?)`,
        `  next      \`ratchet resume ${runId}\` continues from the last checkpoint`,
      ]);
      const history = await ratchet('history');
      const row = history.stdout.split('\n').find((line) => line.includes(runId) && line.includes('killed'));
      expect(row).toMatch(
        new RegExp(`^ {2}${runId} {2}running, but its process is gone \\(killed\\?\\) {2}tdd {2}A stack`),
      );
    } finally {
      await setStatus('completed');
    }
  });

  it('reject twice: the second says the run was already rejected (exit 2, as accept); the notes stay visible from the ledger', async () => {
    const rejected = await ratchet('reject');
    expect(rejected.exitCode, describeResult(rejected)).toBe(0);
    expect(rejected.stdout).toContain(`Rejected run ${runId}: worktree and branch ratchet/${runId} removed.`);

    const again = await ratchet('reject');
    expect(again.exitCode, describeResult(again)).toBe(2);
    expect(again.stdout).not.toContain('removed.');
    expect(again.stderr).toContain(`Run ${runId} was already rejected`);
    const againJson = await ratchet('reject', '--json');
    expect(againJson.exitCode, describeResult(againJson)).toBe(2);
    expect(parseNdjson(againJson.stdout)).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'usage',
        message: expect.stringContaining('already rejected') as unknown,
      }),
    ]);
    const accept = await ratchet('accept');
    expect(accept.exitCode, describeResult(accept)).toBe(2);
    expect(accept.stderr).toContain(`Run ${runId} was already rejected`);

    // The reject removed the run's notes from git ...
    expect(execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'list'], { cwd: repoDir, encoding: 'utf8' })).toBe('');
    // ... but history, report and status read them from the ledger.
    const history = await ratchet('history', runId);
    expect(history.stdout).not.toContain('no note');
    expect(history.stdout).toContain(
      'no longer in git (rejecting the run removed them); shown as the ledger recorded them.',
    );
    const lines = handoffLines(history.stdout);
    expect(lines).toHaveLength(17);
    expect(lines[0]).toMatch(/PLAN -> RED +cycle 1 +plan: /);
    expect(lines.at(-1)).toMatch(/PLAN -> COMPLETE +cycle 5 +plan: all tests done$/);
    const historyJson = await ratchet('history', runId, '--json');
    const { checkpoints } = JSON.parse(historyJson.stdout) as {
      checkpoints: Array<{ noteSource: string; state: { phase: string } | null }>;
    };
    expect(checkpoints.map((checkpoint) => checkpoint.noteSource)).toEqual(Array(17).fill('ledger'));
    expect(checkpoints.every((checkpoint) => checkpoint.state !== null)).toBe(true);

    const report = await ratchet('report');
    expect(report.exitCode, describeResult(report)).toBe(0);
    expect(report.stdout).not.toContain('no note');
    expect(report.stdout).toContain('| PLAN → RED | 1 | 0 |');
    const html = await readFile(join(repoDir, '.ratchet', 'runs', runId, 'report.html'), 'utf8');
    expect(html).not.toContain('no note');
    expect(html).toContain('shown as the ledger recorded them');

    const status = await ratchet('status');
    expect(status.stdout).toMatch(/phase {5}PLAN -> COMPLETE \(cycle 5\)/);
    // Its worktree is gone, and status does not show it.
    const statusJson = JSON.parse((await ratchet('status', '--json')).stdout) as {
      run: { worktree: string };
      worktree: string | null;
    };
    expect(existsSync(statusJson.run.worktree)).toBe(false);
    expect(statusJson.worktree).toBeNull();
    expect(status.stdout).not.toMatch(/^ {2}worktree /m);

    // repair-notes does not write the notes the reject removed back onto the dropped commits.
    const repair = await ratchet('repair-notes');
    expect(repair.exitCode, describeResult(repair)).toBe(2);
    expect(repair.stderr).toContain(`Run ${runId} was rejected: it is over and its branch ratchet/${runId} is gone`);
    expect(repair.stdout).not.toContain('Rewrote');
    expect(execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'list'], { cwd: repoDir, encoding: 'utf8' })).toBe('');
  });

  it('rollback to a checkpoint of another run names the run it belongs to', async () => {
    // Two more runs that stop after their PLAN checkpoint (the cassette has no answer for RED).
    const planOnly = join(dir, 'plan-only.ndjson');
    const demoCassette = await readFile(join(PACKAGE_ROOT, 'demo', 'cassette.ndjson'), 'utf8');
    writeFileSync(planOnly, `${demoCassette.split('\n').slice(0, 3).join('\n')}\n`);
    const start = async (): Promise<{ id: string; plan: string }> => {
      const run = await ratchet(
        'tdd',
        'A stack',
        '--provider',
        'replay',
        '--cassette',
        planOnly,
        '--json',
        ...sandbox.flags,
      );
      expect(run.exitCode, describeResult(run)).toBe(3);
      const id = String(parseNdjson(run.stdout)[0]?.runId);
      const plan = execFileSync('git', ['rev-parse', `ratchet/${id}`], { cwd: repoDir, encoding: 'utf8' }).trim();
      return { id, plan };
    };
    const older = await start();
    // Two runs that commit the same PLAN on the same base within one second make the same commit
    // (same tree, parent, message and dates): a commit on main between them keeps them apart.
    execFileSync('git', ['commit', '--allow-empty', '-q', '-m', 'between the two runs'], { cwd: repoDir });
    const latest = await start();
    const demoCheckpoint = (
      JSON.parse((await ratchet('history', runId, '--json')).stdout) as {
        checkpoints: Array<{ sha: string }>;
      }
    ).checkpoints[0]?.sha;
    if (!demoCheckpoint) throw new Error('no checkpoint of the demo run');

    const other = await ratchet('rollback', older.plan.slice(0, 10));
    expect(other.exitCode, describeResult(other)).toBe(2);
    expect(other.stderr).toContain(
      `${older.plan.slice(0, 10)} is not a checkpoint of run ${latest.id}: it is a checkpoint of run ${older.id}.`,
    );
    expect(other.stderr).toContain(`Pass that run: \`ratchet rollback ${older.plan.slice(0, 10)} --run ${older.id}\`.`);
    const rejected = await ratchet('rollback', demoCheckpoint);
    expect(rejected.exitCode, describeResult(rejected)).toBe(2);
    expect(rejected.stderr).toContain(
      `${demoCheckpoint} is not a checkpoint of run ${latest.id}: it is a checkpoint of run ${runId}, which was rejected.`,
    );
    // Named, the run rolls back to it.
    const named = await ratchet('rollback', older.plan, '--run', older.id);
    expect(named.exitCode, describeResult(named)).toBe(0);
    expect(named.stdout).toContain(`Run ${older.id} is back at ${older.plan.slice(0, 8)}`);
  });
});
