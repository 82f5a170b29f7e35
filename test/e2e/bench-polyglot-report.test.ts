/**
 * `ratchet bench polyglot report <DIR>`: the table, `--json` and the HTML page with its
 * per-language chart, read from per-exercise files written here (no model needed), the page
 * rendered in headless Chromium. And a language whose toolchain is missing is skipped with a
 * line saying why, never counted as a silent zero.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRecord, type ExerciseRecord, type TryRecord } from '../../src/bench/polyglot/results.js';
import { POLYGLOT_FIXTURE } from '../support/polyglot-brain.js';
import { renderInChromium } from '../support/refactor-harness.js';
import { runCli } from '../support/run-cli.js';
import { toolchain } from '../support/toolchains.js';

function attempt(number: number, passed: boolean, costUsd: number | null): TryRecord {
  return {
    try: number,
    passed,
    stage: 'completed',
    testExitCode: passed ? 0 : 1,
    testTimedOut: false,
    testSeconds: 1,
    tests: { passed: passed ? 2 : 1, failed: passed ? 0 : 1, skipped: 0, total: 2 },
    testOutputHead: passed ? '2 passed' : '1 failed',
    modelCalls: 2,
    malformedResponses: passed ? 0 : 1,
    inputTokens: 100,
    outputTokens: 10,
    costUsd,
  };
}

function record(language: string, exercise: string, passedAtTry: number | null, seconds: number): ExerciseRecord {
  const tries =
    passedAtTry === 1 ? [attempt(1, true, 0.01)] : [attempt(1, false, 0.01), attempt(2, passedAtTry === 2, 0.02)];
  return {
    version: 1,
    language,
    exercise,
    mode: 'direct',
    provider: 'anthropic',
    model: 'claude-opus-4-5',
    runIds: [`run-${exercise}`],
    status: 'completed',
    tries,
    passedAtTry,
    seconds,
  };
}

describe('ratchet bench polyglot report', () => {
  let out: string;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-report-'));
    writeFileSync(
      join(out, 'bench.json'),
      JSON.stringify({
        version: 1,
        mode: 'direct',
        tries: 2,
        skippedLanguages: [{ language: 'java', reason: 'toolchain missing: `gradle --version` cannot run' }],
      }),
    );
    // python: 1 of 2 at try 1, 2 of 2 by try 2; rust: 0 of 2 at try 1, 1 of 2 by try 2.
    await writeRecord(out, record('python', 'leap', 1, 10));
    await writeRecord(out, record('python', 'bob', 2, 20));
    await writeRecord(out, record('rust', 'raindrops', 2, 30));
    await writeRecord(out, record('rust', 'anagram', null, 40));
  });

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  it('prints the table per language and in all, recounted from the per-exercise files', async () => {
    const result = await runCli(['bench', 'polyglot', 'report', out], { cwd: out, env: {} });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').map((line) => line.split(/\s{2,}/));
    expect(lines[0]).toEqual([
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
    ]);
    // Calls 2 per try: python 6 (1 malformed), rust 8 (3 malformed), 14 in all (4): 71.4% well-formed.
    // Cost $0.01 for a 1-try exercise, $0.03 for a 2-try one: $0.10 in all.
    expect(lines[1]).toEqual(['python', '2', '50%', '100%', '83.3%', '$0.0400', '$0.0200', '15', '0', '0']);
    expect(lines[2]).toEqual(['rust', '2', '0%', '50%', '62.5%', '$0.0600', '$0.0300', '35', '0', '0']);
    expect(lines[3]).toEqual(['all', '4', '25%', '75%', '71.4%', '$0.1000', '$0.0250', '25', '0', '0']);
    expect(result.stdout).toContain('skipped java: toolchain missing: `gradle --version` cannot run');
  });

  it('prints the same figures as JSON with --json', async () => {
    const result = await runCli(['bench', 'polyglot', 'report', out, '--json'], { cwd: out, env: {} });
    expect(result.exitCode, result.stderr).toBe(0);
    const summary: unknown = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '');
    expect(summary).toMatchObject({
      type: 'bench-summary',
      exercises: 4,
      passRate: [25, 75],
      wellFormedPercent: 71.4,
      costUsd: 0.1,
      costPerExercise: 0.025,
      secondsPerExercise: 25,
      languages: { python: { passRate: [50, 100] }, rust: { passRate: [0, 50] } },
      skippedLanguages: [{ language: 'java' }],
    });
  });

  const chromium = toolchain('chromium');
  it.skipIf(chromium.missing)(
    `writes a self-contained page whose chart shows each language${chromium.note}`,
    async () => {
      const result = await runCli(['bench', 'polyglot', 'report', out], { cwd: out, env: {} });
      expect(result.exitCode, result.stderr).toBe(0);
      const file = join(out, 'report.html');
      const html = readFileSync(file, 'utf8');
      // No script, stylesheet, image or font from anywhere: the page stands alone.
      expect(html).not.toMatch(/<script|<link|<img|url\(|src=/i);
      const dom = await renderInChromium(file);
      const bars = [...dom.matchAll(/<rect class="(first|last)" data-language="(\w+)" data-rate="([\d.]+)"/g)].map(
        (match) => `${match[2] ?? ''} ${match[1] ?? ''} ${match[3] ?? ''}`,
      );
      expect(bars).toEqual(['python last 100', 'python first 50', 'rust last 50', 'rust first 0']);
      expect(dom).toContain('4 exercises, --mode direct, 2 tries: 25% at try 1, 75% at try 2');
      expect(dom).toContain('java: toolchain missing');
    },
  );
});

describe('ratchet bench polyglot with a toolchain missing', () => {
  it('skips the language with a line saying why, and records the skip', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-skip-'));
    try {
      // A PATH with git and nothing else: no cargo.
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
      const out = join(dir, 'out');
      const result = await runCli(
        [
          'bench',
          'polyglot',
          POLYGLOT_FIXTURE,
          '--languages',
          'rust,cobol',
          '--out',
          out,
          '--provider',
          'anthropic',
          '--model',
          'm',
        ],
        { cwd: dir, env: { PATH: bin, RATCHET_HOME: join(dir, 'home') } },
      );
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('skip rust: toolchain missing: `cargo --version` cannot run');
      expect(result.stdout).toContain("skip cobol: the benchmark does not know how to run cobol's tests");
      const summary: unknown = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(summary).toMatchObject({
        exercises: 0,
        skippedLanguages: [{ language: 'rust' }, { language: 'cobol' }],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ratchet bench polyglot on Java without Gradle', () => {
  it('skips Java with a line naming gradle, and records the skip in the summary and the report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-java-'));
    try {
      // An Exercism-shaped Java exercise, and a PATH with git and nothing else: no gradle.
      const exercise = join(dir, 'benchmark', 'java', 'exercises', 'practice', 'hello-world');
      const files: Record<string, string> = {
        '.docs/instructions.md': 'Greet the world.\n',
        '.meta/config.json': JSON.stringify({
          files: {
            solution: ['src/main/java/Greeter.java'],
            test: ['src/test/java/GreeterTest.java'],
            example: ['.meta/src/reference/java/Greeter.java'],
          },
        }),
        'build.gradle': 'plugins { id "java" }\n',
        'src/main/java/Greeter.java': 'class Greeter { String getGreeting() { return ""; } }\n',
        'src/test/java/GreeterTest.java': 'class GreeterTest {}\n',
      };
      for (const [file, content] of Object.entries(files)) {
        mkdirSync(join(exercise, file, '..'), { recursive: true });
        writeFileSync(join(exercise, file), content);
      }
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
      const out = join(dir, 'out');
      const result = await runCli(
        ['bench', 'polyglot', join(dir, 'benchmark'), '--out', out, '--provider', 'anthropic', '--model', 'm'],
        { cwd: dir, env: { PATH: bin, RATCHET_HOME: join(dir, 'home') } },
      );
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('skip java: toolchain missing: `gradle --version` cannot run');
      const summary: unknown = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(summary).toMatchObject({
        exercises: 0,
        skippedLanguages: [{ language: 'java', reason: 'toolchain missing: `gradle --version` cannot run' }],
      });
      const report = await runCli(['bench', 'polyglot', 'report', out], { cwd: dir, env: {} });
      expect(report.stdout).toContain('skipped java: toolchain missing: `gradle --version` cannot run');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
