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
  interface Seen {
    entry: ToolchainLogEntry;
    skipped: Set<string>;
    /** The files that ran without the tool, by how (`entry.instead`). */
    instead: Map<string, Set<string>>;
  }
  const byTool = new Map<string, Seen>();
  for (const entry of entries) {
    const seen: Seen = byTool.get(entry.name) ?? { entry, skipped: new Set(), instead: new Map() };
    if (entry.instead === undefined) seen.skipped.add(entry.suite);
    else seen.instead.set(entry.instead, (seen.instead.get(entry.instead) ?? new Set<string>()).add(entry.suite));
    byTool.set(entry.name, seen);
  }
  if (byTool.size === 0) return [];
  const lines = ['', `Missing toolchains (${byTool.size}); install them to run every test as CI does:`];
  const files = (suites: Set<string>): string => `${suites.size} file(s): ${[...suites].sort().join(', ')}`;
  for (const [name, { entry, skipped, instead }] of [...byTool].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${name}: ${entry.what} (${entry.problem})`);
    lines.push(`    install: ${entry.install}`);
    if (skipped.size > 0) lines.push(`    skipped in ${files(skipped)}`);
    for (const [how, suites] of [...instead].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`    ${how} in ${files(suites)}`);
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
