/**
 * Vitest global setup (both projects, see vitest.config.ts): gives the suites a file to note the
 * toolchains they skipped for (`toolchain()` in ./toolchains.ts), and at the end of the run
 * prints one summary naming each missing tool, the suites it skipped and its install command.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOLCHAIN_LOG_VARIABLE, type ToolchainLogEntry } from './toolchains.js';

function readLog(file: string): ToolchainLogEntry[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as ToolchainLogEntry);
  } catch {
    return [];
  }
}

/** The summary lines for the entries the suites logged (empty when nothing was skipped). */
export function toolchainSummary(entries: readonly ToolchainLogEntry[]): string[] {
  const byTool = new Map<string, { entry: ToolchainLogEntry; suites: Set<string> }>();
  for (const entry of entries) {
    const seen = byTool.get(entry.name) ?? { entry, suites: new Set<string>() };
    seen.suites.add(entry.suite);
    byTool.set(entry.name, seen);
  }
  if (byTool.size === 0) return [];
  const lines = ['', `Skipped for missing toolchains (${byTool.size}); install them to run every test:`];
  for (const [name, { entry, suites }] of [...byTool].sort(([a], [b]) => a.localeCompare(b))) {
    const files = [...suites].sort();
    lines.push(`  ${name}: ${entry.what} (${entry.problem})`);
    lines.push(`    install: ${entry.install}`);
    lines.push(`    skipped in ${files.length} file(s): ${files.join(', ')}`);
  }
  lines.push('CI (.ci/run) installs them all and sets RATCHET_TEST_REQUIRE_ALL=1, under which a missing one fails.');
  return lines;
}

export default function setup(): () => void {
  // The first project's setup makes the file; the second one's finds it in the environment.
  if (process.env[TOOLCHAIN_LOG_VARIABLE]) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-toolchains-'));
  const log = join(dir, 'missing.ndjson');
  process.env[TOOLCHAIN_LOG_VARIABLE] = log;
  return () => {
    const lines = toolchainSummary(readLog(log));
    if (lines.length > 0) console.log(lines.join('\n'));
    rmSync(dir, { recursive: true, force: true });
  };
}
