/**
 * `writeRunReport` runs what the reports show through the ledger's redactor: a key the agent wrote
 * into a committed file reaches the checkpoint diffs from git, not from the (redacted) ledger.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asGitRun } from '../../src/engine/git-run.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { writeRunReport } from '../../src/report/write-report.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const RUN_ID = '20260101-000000-c0de';
/** A configured secret (an `*_API_KEY` value) and a key of a well-known shape nobody configured. */
const CONFIGURED_SECRET = 'configured-secret-value-0123456789';
const SHAPED_KEY = 'sk-ant-api03-LeakedInACommittedFile0123456789';

let repo: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  repo = await createTempRepo();
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [CONFIGURED_SECRET] });
});
afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

describe('writeRunReport', () => {
  it('redacts keys from the checkpoint diffs of report.md and report.html', async () => {
    const baseCommit = repo.run('rev-parse', 'HEAD');
    const branch = `ratchet/${RUN_ID}`;
    repo.run('checkout', '-q', '-b', branch);
    await repo.write({
      'src/config.js': `export const apiKey = '${SHAPED_KEY}';\nexport const other = '${CONFIGURED_SECRET}';\n`,
    });
    repo.run('add', '-A');
    repo.run('commit', '-q', '-m', 'feat: config');
    repo.run('checkout', '-q', 'main');
    const run = await ledger.createRun({
      id: RUN_ID,
      workflow: 'tdd',
      repoRoot: repo.dir,
      feature: 'Configure the client',
      branch,
      baseBranch: 'main',
      baseCommit,
      worktree: repo.path('worktree'),
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
    });

    const written = await writeRunReport(repo.dir, asGitRun(run), ledger, new Date(), {
      secrets: [CONFIGURED_SECRET],
    });
    const markdown = await readFile(written.markdownPath, 'utf8');
    const html = await readFile(written.htmlPath, 'utf8');
    expect(written.markdownPath).toBe(join(repo.dir, '.ratchet', 'runs', RUN_ID, 'report.md'));
    for (const report of [markdown, html]) {
      expect(report).toContain('feat: config');
      expect(report).toContain('src/config.js');
      expect(report).not.toContain(SHAPED_KEY);
      expect(report).not.toContain(CONFIGURED_SECRET);
      expect(report).toContain('[REDACTED]');
    }
  });
});
