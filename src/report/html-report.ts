import { failingText, summaryRows, verificationResult } from './markdown-report.js';
import type { ReportData } from './report-data.js';
import { ledgerNotesText } from './summary-text.js';

function escape(text: string | number | null | undefined): string {
  return String(text ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function diffHtml(diff: string): string {
  if (!diff.trim()) return '<p class="muted">no changes (empty checkpoint)</p>';
  const lines = diff.split('\n').map((line) => {
    const kind =
      line.startsWith('+') && !line.startsWith('+++')
        ? 'add'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'del'
          : line.startsWith('@@')
            ? 'hunk'
            : '';
    return `<span class="${kind}">${escape(line)}</span>`;
  });
  return `<pre class="diff">${lines.join('\n')}</pre>`;
}

const STYLE = `
body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1f2328}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}code{font-family:ui-monospace,monospace;font-size:90%}
.accepted,.ok{color:#1a7f37;font-weight:600}.rejected,.failed,.error{color:#cf222e;font-weight:600}.muted{color:#656d76}
pre.diff{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:12px}.add{color:#1a7f37}.del{color:#cf222e}.hunk{color:#8250df}
details{margin:.4rem 0}summary{cursor:pointer}`;

/** The run report as one self-contained HTML page (no external assets). */
export function renderHtmlReport(data: ReportData): string {
  const { run } = data;
  const rows = (cells: Array<string | number | null | undefined>, raw = false): string =>
    `<tr>${cells.map((value) => `<td>${raw ? String(value ?? '') : escape(value)}</td>`).join('')}</tr>`;
  // A workflow whose checkpoints carry no handoff note (refactor, solve) shows them by subject.
  const bySubject = data.progress.kind !== 'handoff-notes';
  const ledgerNote = ledgerNotesText(data.checkpoints, run.status);
  const checkpoints = data.checkpoints
    .map((checkpoint) =>
      bySubject
        ? rows([`<code>${escape(checkpoint.sha.slice(0, 8))}</code>`, escape(checkpoint.subject)], true)
        : rows(
            [
              `<code>${escape(checkpoint.sha.slice(0, 8))}</code>`,
              escape(checkpoint.subject),
              checkpoint.state
                ? escape(`${checkpoint.state.phase} → ${checkpoint.state.nextPhase ?? '-'}`)
                : `<span class="muted">${escape(checkpoint.noteError ?? 'no note')}</span>`,
              escape(checkpoint.state?.cycleNumber),
              escape(checkpoint.state?.retryCount),
            ],
            true,
          ),
    )
    .join('\n');
  const byTask = data.stages.some((stage) => stage.task !== null);
  const stages = data.stages
    .map((stage) =>
      rows(
        [
          ...(byTask ? [escape(stage.task ?? '')] : []),
          stage.cycle,
          stage.stage,
          stage.attempt,
          `<span class="${escape(stage.outcome ?? 'open')}">${escape(stage.outcome ?? 'open')}</span>`,
          escape(stage.reason),
        ],
        true,
      ),
    )
    .join('\n');
  const verifiedByTask = data.verifications.some((verification) => verification.task !== null);
  const verifications = data.verifications
    .map((verification) => {
      const result = verificationResult(verification);
      const good = verification.ok ?? (verification.failed === 0 && !verification.timedOut);
      return rows(
        [
          ...(verifiedByTask ? [escape(verification.task ?? '')] : []),
          escape(verification.stage),
          escape(verification.kind),
          `<code>${escape(verification.command)}</code>`,
          `<span class="${good ? 'ok' : 'failed'}">${escape(result)}</span>`,
          escape(`${verification.durationMs} ms`),
          escape(failingText(verification)),
        ],
        true,
      );
    })
    .join('\n');
  const changes = data.checkpoints
    .map(
      (checkpoint) =>
        `<details><summary><code>${escape(checkpoint.sha.slice(0, 8))}</code> ${escape(checkpoint.subject)}</summary>${diffHtml(checkpoint.diff)}</details>`,
    )
    .join('\n');
  const { refactor } = data;
  const batchRows = refactor.batches
    .map((batch) =>
      rows(
        [
          escape(batch.batch),
          `<span class="${batch.outcome === 'committed' ? 'ok' : batch.outcome === 'failed' ? 'failed' : 'muted'}">${escape(batch.outcome)}</span>`,
          escape(batch.attempts),
          `<code>${escape(batch.commit?.slice(0, 8))}</code>`,
          escape(batch.reason?.slice(0, 300)),
        ],
        true,
      ),
    )
    .join('\n');
  const admissions = refactor.patchChecks
    .filter((check) => !check.admitted)
    .map(
      (check) =>
        `<li>${escape(check.batch)} attempt ${escape(check.attempt)}: ${escape(check.violations.join('; ').slice(0, 400))}</li>`,
    )
    .join('');
  const restored = refactor.patchChecks
    .filter((check) => check.admitted && check.violations.length > 0)
    .flatMap((check) =>
      check.violations.map((violation) => `<li>${escape(check.batch)}: ${escape(violation.slice(0, 300))}</li>`),
    )
    .join('');
  const contracts = refactor.contracts
    .map(
      (contract) =>
        `<li>${escape(contract.batch)} (${contract.allowed ? 'allowed' : 'rejected'}): removed ${escape(contract.removed.join(', ') || '-')}; changed ${escape(contract.changed.join(', ') || '-')}; added ${escape(contract.added.join(', ') || '-')}</li>`,
    )
    .join('');
  const refactorSection =
    refactor.plan || refactor.batches.length > 0
      ? `<h2>Batches</h2>
<p>${refactor.plan ? `Plan: ${escape(refactor.plan.batches)} batch${refactor.plan.batches === 1 ? '' : 'es'} (${escape(refactor.plan.source)}).` : ''} ${refactor.backup ? `Backup: <code>${escape(refactor.backup.directory)}</code>.` : ''}</p>
<table id="batches"><tr><th>Batch</th><th>Outcome</th><th>Attempts</th><th>Commit</th><th>Reason</th></tr>
${batchRows}
</table>
${admissions ? `<h3>Patches rejected by the admission checks</h3><ul>${admissions}</ul>` : ''}
${restored ? `<h3>Formatter changes not kept (restored)</h3><ul>${restored}</ul>` : ''}
${contracts ? `<h3>Public API changes</h3><ul>${contracts}</ul>` : ''}`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ratchet run ${escape(run.id)}</title><style>${STYLE}</style></head>
<body>
<h1>Ratchet run <code>${escape(run.id)}</code></h1>
<table>
${summaryRows(data)
  .map((row) => rows(row))
  .join('\n')}
</table>
${refactorSection}
<h2>Checkpoints</h2>
<table id="checkpoints"><tr><th>Commit</th><th>Subject</th>${bySubject ? '' : '<th>Phase</th><th>Cycle</th><th>Retries</th>'}</tr>
${checkpoints}
</table>
${ledgerNote ? `<p class="muted">${escape(ledgerNote)}</p>\n` : ''}<h2>Stage attempts</h2>
<table id="stages"><tr>${byTask ? '<th>Task</th>' : ''}<th>Cycle</th><th>Stage</th><th>Attempt</th><th>Outcome</th><th>Reason</th></tr>
${stages}
</table>
<h2>Verification runs</h2>
<table id="verifications"><tr>${verifiedByTask ? '<th>Task</th>' : ''}<th>Stage</th><th>Kind</th><th>Command</th><th>Result</th><th>Duration</th><th>Failing</th></tr>
${verifications}
</table>
<h2>Changes</h2>
${changes}
<p class="muted">Generated ${escape(data.generatedAt)} by Ratchet.</p>
</body></html>
`;
}
