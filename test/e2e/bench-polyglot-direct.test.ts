/**
 * `ratchet bench polyglot --mode direct` end to end: the built CLI runs the benchmark-shaped
 * fixture (Python/pytest, JavaScript/jest, Rust/cargo, Go, C++/CMake) against the fake Anthropic
 * server, whose scripted model writes each example solution, and for `leap` a wrong first try.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { E2E_API_KEY } from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createPolyglotBrain, POLYGLOT_FIXTURE, type PolyglotBrain } from '../support/polyglot-brain.js';
import { recountBenchSummary } from '../support/recount-bench.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('pytest', 'cargo', 'go', 'cmake', 'polyglot-jest');
const sandbox = sandboxForThisMachine();
const JS_CACHE = join(homedir(), '.cache', 'ratchet-tools', 'polyglot-js');
/** Priced, so every call's cost is known: 1000 input and 100 output tokens at $5 / $25 per million. */
const MODEL = 'claude-opus-4-5';
const COST_PER_CALL = (1000 * 5 + 100 * 25) / 1e6;

/** Leap's wrong first try: a year divisible by 100 is no exception. */
const WRONG_LEAP = { 'leap.py': 'def leap_year(year):\n    return year % 4 == 0\n' };

describe.skipIf(tools.missing)(`ratchet bench polyglot --mode direct${tools.note}${sandbox.note}`, () => {
  let dir: string;
  let server: FakeAnthropicServer;
  let brain: PolyglotBrain;
  let result: CliResult;
  const out = (): string => join(dir, 'out');
  const bench = (...extra: string[]): Promise<CliResult> =>
    runCli(
      [
        'bench',
        'polyglot',
        POLYGLOT_FIXTURE,
        '--provider',
        'anthropic',
        '--model',
        MODEL,
        '--out',
        out(),
        '--js-cache',
        JS_CACHE,
        ...sandbox.flags,
        ...extra,
      ],
      {
        cwd: dir,
        env: { RATCHET_HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: E2E_API_KEY },
        timeoutMs: 600_000,
      },
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-'));
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    brain = createPolyglotBrain({ wrongFirst: { leap: WRONG_LEAP } });
    server.setFallback((request) => brain.reply(request));
    result = await bench('--tries', '2', '--workers', '2');
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs every exercise with its own runner and passes the example solutions', async () => {
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(0);
    expect(brain.unexpected).toEqual([]);
    const records = await readRecords(out());
    const failing = records.filter((record) => record.passedAtTry === null);
    expect(failing.map((record) => record.tries.at(-1)?.testOutputHead)).toEqual([]);
    expect(
      records.map((record) => [`${record.language}/${record.exercise}`, record.status, record.passedAtTry]),
    ).toEqual([
      ['cpp/two-fer', 'completed', 1],
      ['go/hamming', 'completed', 1],
      ['javascript/reverse-string', 'completed', 1],
      ['python/leap', 'completed', 2],
      ['rust/raindrops', 'completed', 1],
    ]);
    // Every official test ran, the skipped ones (xtest, #[ignore], EXERCISM_RUN_ALL_TESTS) too.
    const passedTests = Object.fromEntries(
      records.map((record) => [record.exercise, record.tries.at(-1)?.tests.passed]),
    );
    expect(passedTests).toMatchObject({ hamming: 2, 'reverse-string': 3, leap: 4, raindrops: 3 });
  });

  it('gives a failed first try the first 50 lines of the official test output, and one more try', async () => {
    const leap = (await readRecords(out())).find((record) => record.exercise === 'leap');
    expect(leap?.tries.map((entry) => [entry.try, entry.passed])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(leap?.tries[0]?.tests.failed).toBe(1);
    const retry = brain.calls.find((call) => call.exercise === 'leap' && call.try === 2 && call.turn === 0);
    expect(retry?.prompt).toContain('test_year_divisible_by_100_not_by_400_is_common');
    const feedback = retry?.prompt.split('The first lines of their output:')[1]?.split('Fix the code')[0] ?? '';
    expect(feedback.trim().split('\n').length).toBeLessThanOrEqual(50);
    // Before any feedback, the model saw nothing of the tests: they are withheld while it works.
    const firstTries = brain.calls.filter((call) => call.try === 1);
    expect(firstTries.some((call) => /assertIs\(|a sentence with punctuation|PlingPlangPlong/.test(call.prompt))).toBe(
      false,
    );
  });

  it('records the model calls, tokens and cost of every try', async () => {
    const records = await readRecords(out());
    for (const record of records) {
      for (const entry of record.tries) {
        expect(entry.modelCalls).toBe(2);
        expect(entry.inputTokens).toBe(2000);
        expect(entry.costUsd).toBeCloseTo(2 * COST_PER_CALL, 10);
      }
    }
    expect(brain.calls.length).toBe(12);
  });

  it('writes a summary whose every figure is recounted from the per-exercise files', async () => {
    const summary: unknown = JSON.parse(readFileSync(join(out(), 'summary.json'), 'utf8'));
    const records = await readRecords(out());
    // Recounted here by hand, not through summarize(): 4 of 5 at try 1, 5 of 5 by try 2.
    expect(summary).toMatchObject({
      exercises: 5,
      passRate: [80, 100],
      wellFormedPercent: 100,
      modelCalls: 12,
      testTimeouts: 0,
      errors: 0,
      skippedLanguages: [],
    });
    const costs = records.flatMap((record) => record.tries.map((entry) => entry.costUsd ?? Number.NaN));
    const total = costs.reduce((sum, cost) => sum + cost, 0);
    expect((summary as { costUsd: number }).costUsd).toBeCloseTo(total, 6);
    expect((summary as { costPerExercise: number }).costPerExercise).toBeCloseTo(total / 5, 6);
    const seconds = records.reduce((sum, record) => sum + record.seconds, 0) / records.length;
    expect((summary as { secondsPerExercise: number }).secondsPerExercise).toBeCloseTo(seconds, 1);
    expect((summary as { languages: Record<string, { passRate: number[] }> }).languages.python?.passRate).toEqual([
      0, 100,
    ]);
    expect((summary as { languages: Record<string, { passRate: number[] }> }).languages.rust?.passRate).toEqual([
      100, 100,
    ]);
    // And every figure, overall and per language, by the tests' own recount.
    expect(summary).toEqual({ mode: 'direct', tries: 2, skippedLanguages: [], ...recountBenchSummary(records, 2) });
  });

  it('skips the finished exercises of an interrupted run given its --out again', async () => {
    rmSync(join(out(), 'exercises', 'rust', 'raindrops.json'));
    const before = brain.calls.length;
    const again = await bench('--tries', '2', '--languages', 'rust,python');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('python/leap: finished before (passed at try 2)');
    expect(brain.calls.slice(before).map((call) => call.exercise)).toEqual(['raindrops', 'raindrops']);
    expect(existsSync(join(out(), 'exercises', 'rust', 'raindrops.json'))).toBe(true);
  });
});
