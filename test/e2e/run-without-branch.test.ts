/**
 * End to end: `history` and `report` on a ledger run that never made a branch, base commit or
 * worktree (a team iteration's run before its workspace has them). They show what the run has
 * (id, workflow, feature, status, provider) and say it made no branch, instead of failing with
 * an internal error.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/ledger.js';
import { assertFreshBuild, describeResult, runCli, type CliResult } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const RUN_ID = 'team-it-0001-3f2a9c1d';
let repo: TempRepo;

async function ratchet(...args: string[]): Promise<CliResult> {
  return runCli(args, { cwd: repo.dir, env: repo.env });
}

beforeEach(async () => {
  assertFreshBuild();
  repo = await createTempRepo();
  const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
  try {
    // The shape a run has when it never made its branch or worktree: no git fields at all.
    await ledger.createRun({
      id: RUN_ID,
      workflow: 'team',
      repoRoot: repo.dir,
      feature: 'add a slugify helper',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      config: { iteration: 'it-0001' },
    });
    await ledger.updateRun(RUN_ID, { status: 'failed', error: 'the coach stopped the iteration' });
  } finally {
    await ledger.close();
  }
});

afterEach(async () => {
  await repo.cleanup();
});

describe('history and report of a run with no branch, base commit or worktree (built CLI)', () => {
  it('history lists the run and says it made no branch', async () => {
    const listed = await ratchet('history');
    expect(listed.exitCode, describeResult(listed)).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${RUN_ID}\\s+failed\\s+team\\s+add a slugify helper`));
    expect(listed.stdout).toContain(`Checkpoints of ${RUN_ID} (it made no branch)`);
    expect(listed.stdout).toContain('none yet');

    const named = await ratchet('history', RUN_ID, '--json');
    expect(named.exitCode, describeResult(named)).toBe(0);
    const json = JSON.parse(named.stdout) as { run: string; checkpoints: unknown[] };
    expect(json).toMatchObject({ run: RUN_ID, checkpoints: [] });
  });

  it('report writes the report with what the run has and no git fields', async () => {
    const report = await ratchet('report', RUN_ID);
    expect(report.exitCode, describeResult(report)).toBe(0);
    expect(report.stdout).toContain(`# Ratchet run ${RUN_ID}`);
    expect(report.stdout).toContain('| Feature | add a slugify helper |');
    expect(report.stdout).toContain('**failed** — the coach stopped the iteration');
    expect(report.stdout).toContain('| Branch | none (the run made no branch or worktree) |');
    expect(report.stdout).not.toContain('null');
    const html = await readFile(join(repo.dir, '.ratchet', 'runs', RUN_ID, 'report.html'), 'utf8');
    expect(html).toContain('none (the run made no branch or worktree)');

    const latest = await ratchet('report', '--json');
    expect(latest.exitCode, describeResult(latest)).toBe(0);
    expect(JSON.parse(latest.stdout)).toMatchObject({ run: RUN_ID, status: 'failed' });
    expect(existsSync(join(repo.dir, '.ratchet', 'runs', RUN_ID, 'report.md'))).toBe(true);
  });
});
