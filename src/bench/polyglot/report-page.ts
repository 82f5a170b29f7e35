import type { BenchFigures } from './summary.js';
import type { BenchResult } from './run-bench.js';

function escape(text: string | number | null | undefined): string {
  return String(text ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const orDash = (value: number | null, unit = ''): string => (value === null ? '-' : `${value}${unit}`);
const money = (value: number | null): string => (value === null ? 'unknown' : `$${value.toFixed(4)}`);

/** The table's columns: one row per language, then the whole benchmark. */
export const TABLE_HEADINGS = [
  'language',
  'exercises',
  'pass@1',
  'pass@last',
  'well-formed',
  'cost',
  'cost/exercise',
  's/exercise',
  'test timeouts',
  'errors',
] as const;

/** One row of the table (`name`: a language, or `all`). */
function tableRow(name: string, figures: BenchFigures): string[] {
  return [
    name,
    String(figures.exercises),
    `${figures.passRate[0] ?? 0}%`,
    `${figures.passRate.at(-1) ?? 0}%`,
    orDash(figures.wellFormedPercent, '%'),
    money(figures.costUsd),
    money(figures.costPerExercise),
    String(figures.secondsPerExercise),
    String(figures.testTimeouts),
    String(figures.errors),
  ];
}

/** The rows of the table: each language, then `all`. */
export function tableRows(result: BenchResult): string[][] {
  return [
    ...Object.entries(result.languages).map(([language, figures]) => tableRow(language, figures)),
    tableRow('all', result),
  ];
}

/**
 * `--mode tdd`: how honest its runs were, in one sentence (null for a mode without the figures).
 * Recounted from the runs' branches and handoff notes, not from what the runs reported.
 */
export function honestyLine(result: BenchFigures): string | null {
  const honesty = result.honesty;
  if (honesty === undefined) return null;
  return (
    `TDD honesty: ${honesty.redFailing} of ${honesty.redCommits} RED checkpoints (${orDash(honesty.redFailingPercent, '%')}) had their new test failing when committed; ` +
    `${honesty.greenPassing} of ${honesty.greenCommits} GREEN checkpoints (${orDash(honesty.greenPassingPercent, '%')}) a passing suite.`
  );
}

/**
 * The per-language chart: an inline SVG of horizontal bars, pass rate at try 1 over the pass
 * rate at the last try (no script, no external asset: the page stands alone).
 */
function chart(result: BenchResult): string {
  const entries = Object.entries(result.languages);
  const barHeight = 22;
  const gap = 14;
  const left = 110;
  const width = 420;
  const height = entries.length * (barHeight + gap) + gap;
  const bars = entries.map(([language, figures], index) => {
    const y = gap + index * (barHeight + gap);
    const first = figures.passRate[0] ?? 0;
    const last = figures.passRate.at(-1) ?? 0;
    return [
      `<text x="${left - 8}" y="${y + barHeight / 2 + 5}" text-anchor="end">${escape(language)}</text>`,
      `<rect class="last" data-language="${escape(language)}" data-rate="${last}" x="${left}" y="${y}" width="${(width * last) / 100}" height="${barHeight}"><title>${escape(language)}: ${last}% by the last try</title></rect>`,
      `<rect class="first" data-language="${escape(language)}" data-rate="${first}" x="${left}" y="${y}" width="${(width * first) / 100}" height="${barHeight}"><title>${escape(language)}: ${first}% at try 1</title></rect>`,
      `<text x="${left + (width * last) / 100 + 6}" y="${y + barHeight / 2 + 5}">${last}%</text>`,
    ].join('');
  });
  return `<svg id="chart" role="img" aria-label="Pass rate per language" width="${left + width + 60}" height="${height}" xmlns="http://www.w3.org/2000/svg">${bars.join('')}</svg>`;
}

/** The benchmark's page: the summary, the per-language chart and table, the skipped languages. */
export function renderBenchPage(result: BenchResult, title: string): string {
  const rows = tableRows(result)
    .map((cells) => `<tr>${cells.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`)
    .join('');
  const skipped =
    result.skippedLanguages.length === 0
      ? ''
      : `<h2>Skipped</h2><ul id="skipped">${result.skippedLanguages.map((entry) => `<li>${escape(entry.language)}: ${escape(entry.reason)}</li>`).join('')}</ul>`;
  const honesty = honestyLine(result);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
td:first-child,th:first-child{text-align:left}
rect.last{fill:#9ecae1}rect.first{fill:#3182bd}svg text{font-size:13px}
</style></head>
<body>
<h1>${escape(title)}</h1>
<p id="headline">${result.exercises} exercises, --mode ${escape(result.mode)}, ${result.tries} ${result.tries === 1 ? 'try' : 'tries'}: ${result.passRate.map((rate, index) => `${rate}% at try ${index + 1}`).join(', ')}; ${orDash(result.wellFormedPercent, '%')} well-formed responses; ${money(result.costUsd)} in all.</p>
${honesty === null ? '' : `<p id="honesty">${escape(honesty)}</p>`}
<h2>Pass rate per language</h2>
<p>Dark: passed at try 1; light: passed by the last try.</p>
${chart(result)}
<h2>Figures</h2>
<table id="figures"><thead><tr>${TABLE_HEADINGS.map((heading) => `<th>${escape(heading)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>
${skipped}
</body></html>
`;
}
