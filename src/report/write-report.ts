import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitRun } from '../engine/git-run.js';
import { runDir } from '../engine/run-paths.js';
import type { Ledger } from '../ledger/ledger.js';
import { renderHtmlReport } from './html-report.js';
import { renderMarkdownReport } from './markdown-report.js';
import { gatherReportData } from './report-data.js';

export interface WrittenReport {
  /** The Markdown text, also written to `markdownPath`. */
  markdown: string;
  markdownPath: string;
  htmlPath: string;
}

/** Writes a run's Markdown and self-contained HTML reports under `.ratchet/runs/<run-id>/`. */
export async function writeRunReport(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  now: Date = new Date(),
): Promise<WrittenReport> {
  const data = await gatherReportData(repoRoot, run, ledger, now);
  const dir = runDir(repoRoot, run.id);
  await mkdir(dir, { recursive: true });
  const markdown = renderMarkdownReport(data);
  const markdownPath = join(dir, 'report.md');
  const htmlPath = join(dir, 'report.html');
  await writeFile(markdownPath, markdown);
  await writeFile(htmlPath, renderHtmlReport(data));
  return { markdown, markdownPath, htmlPath };
}
