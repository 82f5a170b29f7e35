import type { ReportData } from './report-data.js';

function cell(text: string | number | null | undefined): string {
  return String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
}

function duration(ms: number): string {
  return ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;
}

function costText(data: ReportData): string {
  const { costUsd, unpricedCalls } = data.summary.modelCalls;
  if (data.summary.modelCalls.total === 0) return '$0 (no model calls)';
  if (costUsd === 0 && unpricedCalls > 0) return `unknown (${unpricedCalls} calls to a model without a known price)`;
  return `$${costUsd.toFixed(4)}${unpricedCalls > 0 ? ` + ${unpricedCalls} calls without a known price` : ''}`;
}

/** The run's model: the configured one, else the models its calls report (Claude Code's default). */
function modelText(data: ReportData): string {
  if (data.run.model) return data.run.model;
  const used = [...new Set(data.modelCalls.map((call) => call.model))];
  return used.length > 0 ? used.join(', ') : 'default model';
}

/** The stage attempts by outcome, e.g. `23: 18 accepted, 5 rejected, 1 error` (outcomes with none left out but the first two). */
function stageAttemptsText(data: ReportData): string {
  const { total, accepted, rejected, error, skipped, open } = data.summary.stageAttempts;
  const others = Object.entries({ error, skipped, open })
    .filter(([, count]) => count > 0)
    .map(([outcome, count]) => `, ${count} ${outcome}`)
    .join('');
  return `${total}: ${accepted} accepted, ${rejected} rejected${others}`;
}

/** One verification's result: `ok`, `exit N`, or the test counts (and whether it timed out). */
export function verificationResult(verification: ReportData['verifications'][number]): string {
  if (verification.ok !== null) return verification.ok ? 'ok' : `exit ${String(verification.exitCode)}`;
  return `${verification.passed ?? 0} passed, ${verification.failed ?? 0} failed${verification.timedOut ? ', timed out' : ''}`;
}

/** The report's summary table, label and plain text, for the Markdown and the HTML report alike. */
export function summaryRows(data: ReportData): Array<[label: string, text: string]> {
  const { run, summary } = data;
  return [
    ['Workflow', run.workflow],
    ['Feature', run.feature],
    ['Status', `${run.status}${run.error ? ` — ${run.error}` : ''}`],
    ['Branch', `${run.branch} from ${run.baseBranch ?? 'HEAD'} @ ${run.baseCommit.slice(0, 8)}`],
    ['Provider', `${run.provider ?? ''} ${modelText(data)}`.trim()],
    ['Duration', duration(summary.durationMs)],
    [
      'Model calls',
      `${summary.modelCalls.total} (${summary.modelCalls.failed} failed), ${summary.modelCalls.inputTokens} input / ${summary.modelCalls.outputTokens} output tokens`,
    ],
    ['Cost', costText(data)],
    ['Tool calls', `${summary.toolCalls.total} (${summary.toolCalls.errors} errors)`],
    ['Stage attempts', stageAttemptsText(data)],
    ['Verification runs', `${summary.verifications.total} (${summary.verifications.failing} failing)`],
  ];
}

/** The run report as Markdown. */
export function renderMarkdownReport(data: ReportData): string {
  const { run } = data;
  const lines: string[] = [];
  lines.push(`# Ratchet run ${run.id}`, '');
  lines.push(`| | |`, `| --- | --- |`);
  lines.push(`| Workflow | ${cell(run.workflow)} |`);
  lines.push(`| Feature | ${cell(run.feature)} |`);
  lines.push(`| Status | **${run.status}**${run.error ? ` — ${cell(run.error)}` : ''} |`);
  lines.push(
    `| Branch | \`${cell(run.branch)}\` from \`${cell(run.baseBranch ?? 'HEAD')}\` @ \`${cell(run.baseCommit.slice(0, 8))}\` |`,
  );
  lines.push(`| Provider | ${cell(run.provider)} \`${cell(modelText(data))}\` |`);
  // The rest as the HTML report shows it.
  for (const [label, text] of summaryRows(data).slice(5)) lines.push(`| ${label} | ${cell(text)} |`);
  lines.push('');
  if (run.workflow === 'refactor') {
    // Refactor checkpoints carry no handoff notes: the batch is in the subject.
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
  }
  const { refactor } = data;
  if (refactor.plan || refactor.batches.length > 0) {
    lines.push('', '## Batches', '');
    if (refactor.plan)
      lines.push(
        `Plan: ${refactor.plan.batches} batches (${refactor.plan.source})${refactor.plan.goal ? `, goal: ${cell(refactor.plan.goal)}` : ''}.`,
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
  lines.push(
    '',
    '## Stage attempts',
    '',
    '| Cycle | Stage | Attempt | Outcome | Reason |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const stage of data.stages) {
    lines.push(
      `| ${stage.cycle} | ${stage.stage} | ${stage.attempt} | ${stage.outcome ?? 'open'} | ${cell(stage.reason)} |`,
    );
  }
  lines.push(
    '',
    '## Verification runs',
    '',
    '| Stage | Kind | Command | Result | Duration | Failing |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const verification of data.verifications) {
    const result = verificationResult(verification);
    const failing = verification.failingTests
      .map((test) => `${test.id}${test.kind ? ` (${test.kind})` : ''}`)
      .join('; ');
    lines.push(
      `| ${verification.stage} | ${verification.kind} | \`${cell(verification.command)}\` | ${result} | ${verification.durationMs} ms | ${cell(failing)} |`,
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
