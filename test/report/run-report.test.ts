/**
 * The Markdown and the HTML report show the same summary of a run: every stage outcome counted
 * (errors and open attempts too), duration, tool calls and verification runs, and a test run
 * that timed out says so in both.
 */
import { describe, expect, it } from 'vitest';
import type { HandoffState } from '../../src/core/handoff.js';
import type { GitRun } from '../../src/engine/git-run.js';
import type { RunSummary, StageRow, VerificationRow } from '../../src/ledger/types.js';
import { renderHtmlReport } from '../../src/report/html-report.js';
import { renderMarkdownReport } from '../../src/report/markdown-report.js';
import type { ReportData } from '../../src/report/report-data.js';
import { costText, runCostUsd, tokensText } from '../../src/report/summary-text.js';

const RUN_ID = '20260101-000000-a1b2';
const AT = '2026-01-01T00:00:00.000Z';

const run: GitRun = {
  id: RUN_ID,
  workflow: 'tdd',
  repoRoot: '/repo',
  feature: 'A stack',
  status: 'failed',
  branch: `ratchet/${RUN_ID}`,
  baseBranch: 'main',
  baseCommit: '0123456789abcdef0123456789abcdef01234567',
  worktree: '/home/worktrees/x',
  provider: 'anthropic',
  model: 'claude-x',
  config: null,
  error: 'auth: anthropic rejected the credentials (HTTP 401): invalid x-api-key',
  createdAt: AT,
  updatedAt: AT,
  finishedAt: AT,
  finalCommit: null,
};

const summary: RunSummary = {
  runId: RUN_ID,
  status: 'failed',
  stageAttempts: { total: 4, accepted: 1, rejected: 1, error: 1, skipped: 0, open: 1 },
  modelCalls: {
    total: 3,
    failed: 1,
    inputTokens: 100,
    outputTokens: 20,
    unreportedUsageCalls: 0,
    costUsd: 0.0123,
    costPartial: false,
    unpricedCalls: 0,
  },
  toolCalls: { total: 5, errors: 2 },
  verifications: { total: 2, failing: 1 },
  checkpoints: 0,
  events: 10,
  startedAt: AT,
  finishedAt: AT,
  durationMs: 12_300,
};

const stage = (row: Pick<StageRow, 'stage' | 'phase' | 'attempt' | 'outcome' | 'reason'>, id: number): StageRow => ({
  id,
  runId: RUN_ID,
  cycle: 1,
  startedAt: AT,
  endedAt: row.outcome === null ? null : AT,
  task: null,
  ...row,
});

const timedOut: VerificationRow = {
  id: 1,
  runId: RUN_ID,
  seq: 3,
  stage: 'GREEN',
  kind: 'test',
  command: 'npm test',
  exitCode: null,
  timedOut: true,
  durationMs: 600_000,
  passed: 1,
  failed: 0,
  skipped: 0,
  total: 1,
  ok: null,
  failingTests: [],
  collectionErrors: [],
  outputFile: null,
  createdAt: AT,
  task: null,
};

const data: ReportData = {
  run,
  summary,
  stages: [
    stage({ stage: 'PLAN', phase: 'PLAN', attempt: 1, outcome: 'accepted', reason: null }, 1),
    stage({ stage: 'RED', phase: 'RED', attempt: 1, outcome: 'rejected', reason: 'passed-immediately' }, 2),
    stage({ stage: 'RED_FIX', phase: 'RED', attempt: 2, outcome: 'error', reason: 'auth' }, 3),
    stage({ stage: 'GREEN', phase: 'GREEN', attempt: 1, outcome: null, reason: null }, 4),
  ],
  verifications: [timedOut],
  modelCalls: [],
  checkpoints: [],
  progress: { kind: 'handoff-notes' },
  refactor: { batches: [], patchChecks: [], contracts: [], backup: null, plan: null },
  rollbacks: [],
  generatedAt: AT,
};

/** The text of the HTML report without its tags. */
function textOf(html: string): string {
  return html
    .replace(/<\/t[dh]><t[dh][^>]*>/g, ' | ')
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&');
}

describe('run reports', () => {
  const markdown = renderMarkdownReport(data);
  const html = textOf(renderHtmlReport(data));

  it('count every stage outcome, not only accepted and rejected', () => {
    expect(markdown).toContain('| Stage attempts | 4: 1 accepted, 1 rejected, 1 error, 1 open |');
    expect(html).toContain('Stage attempts | 4: 1 accepted, 1 rejected, 1 error, 1 open');
  });

  it('show the same summary in Markdown and HTML', () => {
    for (const text of [
      'Duration | 12.3 s',
      'Model calls | 3 (1 failed), 100 input / 20 output tokens',
      'Cost | $0.0123',
      'Tool calls | 5 (2 errors)',
      'Verification runs | 2 (1 failing)',
    ]) {
      expect(markdown).toContain(`| ${text} |`);
      expect(html).toContain(text);
    }
    expect(html).toContain(`Status | failed — ${run.error ?? ''}`);
  });

  it('name what could not be collected when a run failed before any test did (a compile error)', () => {
    const compile: VerificationRow = {
      ...timedOut,
      id: 2,
      stage: 'RED',
      exitCode: 2,
      timedOut: false,
      passed: 0,
      total: 0,
      collectionErrors: ['example.com/calc: build failed\n./calc_test.go:12:12: undefined: Subtract'],
    };
    const withCompile = { ...data, verifications: [compile] };
    expect(renderMarkdownReport(withCompile)).toContain('| example.com/calc: build failed (collection) |');
    expect(textOf(renderHtmlReport(withCompile))).toContain('example.com/calc: build failed (collection)');
  });

  it("say whose each stage attempt is in a tasks run, in both, and keep a run's without tasks as it was", () => {
    const tasks = {
      ...data,
      stages: [
        { ...stage({ stage: 'RED', phase: 'RED', attempt: 1, outcome: 'accepted', reason: null }, 1), task: 'KEY' },
        { ...stage({ stage: 'RED', phase: 'RED', attempt: 1, outcome: 'rejected', reason: 'weak' }, 2), task: 'DUMPS' },
      ],
    };
    const markdownOfTasks = renderMarkdownReport(tasks);
    expect(markdownOfTasks).toContain('| Task | Cycle | Stage | Attempt | Outcome | Reason |');
    expect(markdownOfTasks).toContain('| KEY | 1 | RED | 1 | accepted |  |');
    expect(markdownOfTasks).toContain('| DUMPS | 1 | RED | 1 | rejected | weak |');
    const htmlOfTasks = textOf(renderHtmlReport(tasks));
    expect(htmlOfTasks).toContain('Task | Cycle | Stage | Attempt | Outcome | Reason');
    expect(htmlOfTasks).toContain('DUMPS | 1 | RED | 1 | rejected | weak');
    expect(markdown).toContain('| Cycle | Stage | Attempt | Outcome | Reason |');
    expect(markdown).not.toContain('| Task |');
  });

  it('say that a test run timed out in both', () => {
    expect(markdown).toContain('| GREEN | test | `npm test` | 1 passed, 0 failed, timed out | 600000 ms |');
    expect(html).toContain('GREEN | test | npm test | 1 passed, 0 failed, timed out | 600000 ms');
  });

  it('give the figure the cost text says, null where it says unknown (status --json agrees with status)', () => {
    // Issue 13: text status said "cost unknown" while --json said "costUsd": 0.
    const failed = { ...summary.modelCalls, total: 2, failed: 2, costUsd: 0, inputTokens: 0, outputTokens: 0 };
    const cases: Array<[RunSummary['modelCalls'], { provider: string | null; models: string[] }]> = [
      [failed, { provider: 'openai-compatible', models: ['my-local-llm'] }],
      [failed, { provider: 'anthropic', models: ['claude-sonnet-4-5'] }],
      [failed, { provider: 'replay', models: ['scripted'] }],
      [
        { ...failed, failed: 1, costUsd: null, unpricedCalls: 1 },
        { provider: null, models: ['x'] },
      ],
      [
        { ...failed, failed: 0, costUsd: 0.25 },
        { provider: 'anthropic', models: ['claude-sonnet-4-5'] },
      ],
      [
        { ...failed, total: 0, failed: 0 },
        { provider: 'ollama', models: ['llama3.2'] },
      ],
    ];
    const said = cases.map(([calls, run]) => [costText(calls, run).startsWith('unknown'), runCostUsd(calls, run)]);
    expect(said).toEqual([
      [true, null],
      [false, 0],
      [false, 0],
      [true, null],
      [false, 0.25],
      [false, 0],
    ]);
  });

  it('say the cost is unknown when every call to a model without a known price failed', () => {
    const failed = { ...summary.modelCalls, total: 2, failed: 2, costUsd: 0, inputTokens: 0, outputTokens: 0 };
    expect(costText(failed, { provider: 'openai-compatible', models: ['my-local-llm'] })).toBe(
      'unknown (all 2 calls failed; no price known for my-local-llm)',
    );
    // A priced model's failed calls cost nothing; a replayed cassette never costs anything.
    expect(costText(failed, { provider: 'anthropic', models: ['claude-sonnet-4-5'] })).toBe('$0.0000');
    expect(costText(failed, { provider: 'replay', models: ['scripted'] })).toBe('$0.0000');
    expect(costText({ ...failed, failed: 1, costUsd: null, unpricedCalls: 1 }, { provider: null, models: ['x'] })).toBe(
      'unknown (1 calls to a model without a known price)',
    );
    // A priced model's calls whose usage the server did not report: unknown, not $0.
    const noUsage = { ...summary.modelCalls, total: 3, failed: 0, costUsd: null, unpricedCalls: 3 };
    expect(costText(noUsage, { provider: 'openai', models: ['gpt-4o'] })).toBe(
      'unknown (3 calls whose token usage the server did not report)',
    );
    expect(
      costText(
        { ...noUsage, costUsd: 0.5, costPartial: true, unpricedCalls: 1 },
        { provider: 'openai', models: ['gpt-4o'] },
      ),
    ).toBe('$0.5000 + 1 calls whose token usage the server did not report');
    // Token usage no server reported is said so, not summed as 0.
    const words = { in: 'in', out: 'out' };
    expect(tokensText({ ...noUsage, inputTokens: null, outputTokens: null, unreportedUsageCalls: 3 }, words)).toBe(
      'unknown tokens (3 calls without reported usage)',
    );
    expect(tokensText({ ...noUsage, inputTokens: 100, outputTokens: 20, unreportedUsageCalls: 1 }, words)).toBe(
      '100 in / 20 out tokens (+ 1 call without reported usage)',
    );
    expect(
      renderMarkdownReport({
        ...data,
        summary: {
          ...summary,
          modelCalls: { ...noUsage, inputTokens: null, outputTokens: null, unreportedUsageCalls: 3 },
        },
      }),
    ).toContain('| Model calls | 3 (0 failed), unknown tokens (3 calls without reported usage) |');
    const unpriced = renderMarkdownReport({
      ...data,
      run: { ...run, model: 'my-local-llm' },
      summary: { ...summary, modelCalls: { ...failed, total: 1, failed: 1 } },
    });
    expect(unpriced).toContain('| Cost | unknown (the only call failed; no price known for my-local-llm) |');
  });

  it('show the handoff notes git no longer has from the ledger, and say so', () => {
    const state: HandoffState = {
      phase: 'PLAN',
      nextPhase: 'RED',
      cycleNumber: 1,
      currentTest: null,
      completedTests: [],
      pendingTests: [],
      testResult: null,
      error: null,
      errorDetails: null,
      retryCount: 0,
    };
    const checkpoint: ReportData['checkpoints'][number] = {
      sha: 'abcdef0123456789abcdef0123456789abcdef01',
      subject: 'plan: a new stack is empty',
      date: AT,
      state,
      noteError: null,
      noteSource: 'ledger',
      diff: '',
    };
    const rejected = { ...data, run: { ...run, status: 'rejected' as const }, checkpoints: [checkpoint] };
    const text =
      'These handoff notes are no longer in git (rejecting the run removed them); shown as the ledger recorded them.';
    const md = renderMarkdownReport(rejected);
    expect(md).toContain('| `abcdef01` | plan: a new stack is empty | PLAN → RED | 1 | 0 |');
    expect(md).toContain(`_${text}_`);
    expect(textOf(renderHtmlReport(rejected))).toContain(text);
    expect(renderMarkdownReport({ ...rejected, checkpoints: [{ ...checkpoint, noteSource: 'git' }] })).not.toContain(
      'no longer in git',
    );
  });

  it('say when a rolled-back run was rolled back and where the state it replaced is kept', () => {
    const rollback: ReportData['rollbacks'][number] = {
      type: 'backup-restore',
      id: `${RUN_ID}:40`,
      runId: RUN_ID,
      timestamp: '2026-01-02T03:04:05.000Z',
      target: '/repo',
      backup: '/home/backups/repo/x',
      safetyBackup: '/home/backups/repo/x/before-rollback-y',
      branch: 'main',
      previousStatus: 'accepted',
    };
    const rolledBack: ReportData = {
      ...data,
      run: { ...run, workflow: 'refactor', status: 'rolled-back', error: null },
      progress: { kind: 'checkpoints', noun: 'batches', counted: 'checkpoint: batch-' },
      rollbacks: [rollback],
    };
    const text =
      'Rolled back | at 2026-01-02T03:04:05.000Z (it was accepted): /repo restored from /home/backups/repo/x, branch main reset; the state it replaced is kept in /home/backups/repo/x/before-rollback-y';
    const md = renderMarkdownReport(rolledBack);
    expect(md).toContain('| Status | **rolled-back** |');
    expect(md).toContain(`| ${text} |`);
    // Right below the status, as in the HTML report.
    expect(md.indexOf('| Rolled back |')).toBe(md.indexOf('| Status |') + '| Status | **rolled-back** |\n'.length);
    const page = textOf(renderHtmlReport(rolledBack));
    expect(page).toContain('Status | rolled-back');
    expect(page).toContain(text);
    // A second rollback gets its own row.
    const again = { ...rollback, id: `${RUN_ID}:41`, previousStatus: 'rolled-back' };
    expect(renderMarkdownReport({ ...rolledBack, rollbacks: [rollback, again] })).toContain(
      '| Rolled back | at 2026-01-02T03:04:05.000Z (again): /repo',
    );
  });
});
