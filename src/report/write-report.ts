import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRedactor, redactValue, secretsFromEnv } from '../core/redact.js';
import { runDir } from '../engine/run-paths.js';
import type { Ledger } from '../ledger/ledger.js';
import type { RunRow } from '../ledger/types.js';
import { renderHtmlReport } from './html-report.js';
import { renderMarkdownReport } from './markdown-report.js';
import { gatherReportData } from './report-data.js';

export interface WrittenReport {
  /** The Markdown text, also written to `markdownPath`. */
  markdown: string;
  markdownPath: string;
  htmlPath: string;
}

export interface WriteReportOptions {
  /**
   * Values to redact wherever they appear, as the ledger does (see `secretsFromEnv`); default:
   * the keys and tokens of `process.env`, like the ledger's default.
   */
  secrets?: readonly string[];
}

/**
 * Writes a run's Markdown and self-contained HTML reports under `.ratchet/runs/<run-id>/`. What
 * they show goes through the ledger's redactor first: the checkpoint diffs come from git, not
 * from the (redacted) ledger, and a key the agent wrote into a committed file must not reach a
 * report meant to be shared.
 */
export async function writeRunReport(
  repoRoot: string,
  run: RunRow,
  ledger: Ledger,
  now: Date = new Date(),
  options: WriteReportOptions = {},
): Promise<WrittenReport> {
  const redact = createRedactor(options.secrets ?? secretsFromEnv(process.env));
  const data = redactValue(await gatherReportData(repoRoot, run, ledger, now), redact);
  const dir = runDir(repoRoot, run.id);
  await mkdir(dir, { recursive: true });
  const markdown = renderMarkdownReport(data);
  const markdownPath = join(dir, 'report.md');
  const htmlPath = join(dir, 'report.html');
  await writeFile(markdownPath, markdown);
  await writeFile(htmlPath, renderHtmlReport(data));
  return { markdown, markdownPath, htmlPath };
}
