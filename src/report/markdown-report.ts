import type { RunRow } from '../ledger/types.js';
import type { ReportData } from './report-data.js';
import { costText, ledgerNotesText, rollbackText, stageOutcomesText, tokensText } from './summary-text.js';

function cell(text: string | number | null | undefined): string {
  return String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
}

function duration(ms: number): string {
  return ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;
}

/** The run's models: the configured one, else the models its calls report (Claude Code's default). */
function modelsOf(data: ReportData): string[] {
  if (data.run.model) return [data.run.model];
  return [...new Set(data.modelCalls.map((call) => call.model))];
}

function modelText(data: ReportData): string {
  const models = modelsOf(data);
  return models.length > 0 ? models.join(', ') : 'default model';
}

/** One verification's result: `ok`, `exit N`, or the test counts (and whether it timed out). */
export function verificationResult(verification: ReportData['verifications'][number]): string {
  if (verification.ok !== null) return verification.ok ? 'ok' : `exit ${String(verification.exitCode)}`;
  return `${verification.passed ?? 0} passed, ${verification.failed ?? 0} failed${verification.timedOut ? ', timed out' : ''}`;
}

/**
 * The Failing cell of a verification run: its failing tests with their kinds, else what could not
 * be collected (a compile or import error fails a run before any test does), first lines only.
 */
export function failingText(verification: ReportData['verifications'][number]): string {
  if (verification.failingTests.length > 0)
    return verification.failingTests.map((test) => `${test.id}${test.kind ? ` (${test.kind})` : ''}`).join('; ');
  return verification.collectionErrors
    .map((error) => {
      const line = error.split('\n').find((text) => text.trim() !== '') ?? error;
      return `${line.length > 160 ? `${line.slice(0, 160)}...` : line} (collection)`;
    })
    .join('; ');
}

/**
 * The run's branch and where it started; a run the ledger has no branch or base commit for (one
 * that never made them, such as a team iteration's before its workspace) says so.
 */
function branchText(run: Pick<RunRow, 'branch' | 'baseBranch' | 'baseCommit'>): string {
  if (run.branch === null || run.baseCommit === null) return 'none (the run made no branch or worktree)';
  return `${run.branch} from ${run.baseBranch ?? 'HEAD'} @ ${run.baseCommit.slice(0, 8)}`;
}

/** The report's summary table, label and plain text, for the Markdown and the HTML report alike. */
export function summaryRows(data: ReportData): Array<[label: string, text: string]> {
  const { run, summary } = data;
  return [
    ['Workflow', run.workflow],
    ['Feature', run.feature],
    ['Status', `${run.status}${run.error ? ` — ${run.error}` : ''}`],
    // `ratchet refactor rollback`: when, and where the state it replaced is kept.
    ...data.rollbacks.map((event): [string, string] => [
      'Rolled back',
      rollbackText(event).replace(/^rolled back /, ''),
    ]),
    ['Branch', branchText(run)],
    ['Provider', `${run.provider ?? ''} ${modelText(data)}`.trim()],
    ['Duration', duration(summary.durationMs)],
    [
      'Model calls',
      `${summary.modelCalls.total} (${summary.modelCalls.failed} failed), ${tokensText(summary.modelCalls, { in: 'input', out: 'output' })}`,
    ],
    ['Cost', costText(summary.modelCalls, { provider: run.provider, models: modelsOf(data) })],
    ['Tool calls', `${summary.toolCalls.total} (${summary.toolCalls.errors} errors)`],
    ['Stage attempts', `${summary.stageAttempts.total}: ${stageOutcomesText(summary.stageAttempts)}`],
    ['Verification runs', `${summary.verifications.total} (${summary.verifications.failing} failing)`],
  ];
}

/** The run report as Markdown. */
export function renderMarkdownReport(data: ReportData): string {
  const { run } = data;
  const lines: string[] = [];
  lines.push(`# Ratchet run ${run.id}`, '');
  lines.push(`| | |`, `| --- | --- |`);
  // The rows the HTML report shows, some with Markdown of their own.
  const marked: Record<string, string> = {
    Status: `**${run.status}**${run.error ? ` — ${cell(run.error)}` : ''}`,
    Branch:
      run.branch === null || run.baseCommit === null
        ? cell(branchText(run))
        : `\`${cell(run.branch)}\` from \`${cell(run.baseBranch ?? 'HEAD')}\` @ \`${cell(run.baseCommit.slice(0, 8))}\``,
    Provider: `${cell(run.provider)} \`${cell(modelText(data))}\``,
  };
  for (const [label, text] of summaryRows(data)) lines.push(`| ${label} | ${marked[label] ?? cell(text)} |`);
  lines.push('');
  if (data.progress.kind !== 'handoff-notes') {
    // Checkpoints without handoff notes (refactor, solve): what they did is in the subject.
    lines.push('## Checkpoints', '', '| Commit | Subject |', '| --- | --- |');
    for (const checkpoint of data.checkpoints)
      lines.push(`| \`${checkpoint.sha.slice(0, 8)}\` | ${cell(checkpoint.subject)} |`);
  } else {
    lines.push(
      '## Checkpoints',
      '',
      '| Commit | Subject | Phase | Cycle | Retries |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const checkpoint of data.checkpoints) {
      const state = checkpoint.state;
      lines.push(
        `| \`${checkpoint.sha.slice(0, 8)}\` | ${cell(checkpoint.subject)} | ${state ? `${state.phase} → ${state.nextPhase ?? '-'}` : cell(checkpoint.noteError ?? 'no note')} | ${state?.cycleNumber ?? ''} | ${state?.retryCount ?? ''} |`,
      );
    }
    const note = ledgerNotesText(data.checkpoints, run.status);
    if (note) lines.push('', `_${note}_`);
  }
  const { refactor } = data;
  if (refactor.plan || refactor.batches.length > 0) {
    lines.push('', '## Batches', '');
    if (refactor.plan)
      lines.push(
        `Plan: ${refactor.plan.batches} batch${refactor.plan.batches === 1 ? '' : 'es'} (${refactor.plan.source})${refactor.plan.goal ? `, goal: ${cell(refactor.plan.goal)}` : ''}.`,
        '',
      );
    if (refactor.backup)
      lines.push(
        `Backup: \`${cell(refactor.backup.directory)}\` (${refactor.backup.bundle ? 'git bundle + ' : ''}tar.gz snapshot).`,
        '',
      );
    lines.push('| Batch | Outcome | Attempts | Commit | Reason |', '| --- | --- | --- | --- | --- |');
    for (const batch of refactor.batches)
      lines.push(
        `| ${batch.batch} | ${batch.outcome} | ${batch.attempts} | ${batch.commit ? `\`${batch.commit.slice(0, 8)}\`` : ''} | ${cell(batch.reason?.slice(0, 200))} |`,
      );
    const rejected = refactor.patchChecks.filter((check) => !check.admitted);
    if (rejected.length > 0) {
      lines.push('', '### Patches rejected by the admission checks', '');
      for (const check of rejected)
        lines.push(`- ${check.batch} attempt ${check.attempt}: ${cell(check.violations.join('; ').slice(0, 400))}`);
    }
    const restored = refactor.patchChecks.filter((check) => check.admitted && check.violations.length > 0);
    if (restored.length > 0) {
      lines.push('', '### Formatter changes not kept (restored)', '');
      for (const check of restored)
        for (const violation of check.violations) lines.push(`- ${check.batch}: ${cell(violation.slice(0, 300))}`);
    }
    if (refactor.contracts.length > 0) {
      lines.push('', '### Public API changes', '');
      for (const contract of refactor.contracts) {
        lines.push(
          `- ${contract.batch} (${contract.allowed ? 'allowed' : 'rejected'}): removed ${contract.removed.join(', ') || '-'}; changed ${contract.changed.join(', ') || '-'}; added ${contract.added.join(', ') || '-'}`,
        );
      }
    }
  }
  // A tasks run's tasks go through the same stages at once: each attempt says whose it is.
  const byTask = data.stages.some((stage) => stage.task !== null);
  lines.push(
    '',
    '## Stage attempts',
    '',
    `|${byTask ? ' Task |' : ''} Cycle | Stage | Attempt | Outcome | Reason |`,
    `|${byTask ? ' --- |' : ''} --- | --- | --- | --- | --- |`,
  );
  for (const stage of data.stages) {
    lines.push(
      `|${byTask ? ` ${cell(stage.task ?? '')} |` : ''} ${stage.cycle} | ${stage.stage} | ${stage.attempt} | ${stage.outcome ?? 'open'} | ${cell(stage.reason)} |`,
    );
  }
  // And so is each test run: the suite after a merge is the run's own (no task).
  const verifiedByTask = data.verifications.some((verification) => verification.task !== null);
  lines.push(
    '',
    '## Verification runs',
    '',
    `|${verifiedByTask ? ' Task |' : ''} Stage | Kind | Command | Result | Duration | Failing |`,
    `|${verifiedByTask ? ' --- |' : ''} --- | --- | --- | --- | --- | --- |`,
  );
  for (const verification of data.verifications) {
    const result = verificationResult(verification);
    const failing = failingText(verification);
    lines.push(
      `|${verifiedByTask ? ` ${cell(verification.task ?? '')} |` : ''} ${verification.stage} | ${verification.kind} | \`${cell(verification.command)}\` | ${result} | ${verification.durationMs} ms | ${cell(failing)} |`,
    );
  }
  lines.push('', '## Changes', '');
  for (const checkpoint of data.checkpoints) {
    lines.push(`### \`${checkpoint.sha.slice(0, 8)}\` ${checkpoint.subject}`, '');
    lines.push(
      checkpoint.diff.trim()
        ? ['```diff', checkpoint.diff.trimEnd(), '```'].join('\n')
        : '_no changes (empty checkpoint)_',
      '',
    );
  }
  lines.push(`_Generated ${data.generatedAt} by Ratchet._`, '');
  return lines.join('\n');
}
