/**
 * `ratchet bench polyglot --mode tdd` end to end: the built CLI runs a `ratchet tdd` run per try
 * on the benchmark-shaped fixture's Python exercise against the fake Anthropic server, whose
 * scripted model works through one test-list item (PLAN, RED, GREEN, REFACTOR); the run's branch
 * is merged into the exercise's repository, then graded by the official tests, which the model
 * never saw. C++ (tests run by the build, no per-test results) is skipped with its reason.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { startScriptedModel, type ScriptedModel } from '../support/e2e-run.js';
import { POLYGLOT_FIXTURE, runBenchPolyglot } from '../support/polyglot-brain.js';
import { recountBenchSummary } from '../support/recount-bench.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { bash, planSteps, say, write, type ScriptStep } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('pytest');
const sandbox = sandboxForThisMachine();

const ITEM = 'leap_year follows the Gregorian rule';
const TEST_FILE = 'test_leap_rules.py';
const LEAP_TEST = `from leap import leap_year


def test_gregorian_rule():
    assert [leap_year(year) for year in (2015, 1996, 1900, 2000)] == [False, True, False, True]
`;
const LEAP = 'def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n';

const steps: ScriptStep[] = [
  ...planSteps('leap', [{ text: ITEM, testFile: TEST_FILE, implFile: 'leap.py' }]),
  // Before writing its test, the model looks for the official ones: the repository has none.
  {
    stage: 'RED',
    test: ITEM,
    turns: [say('Any tests yet?', bash('ls; echo probe-done')), say('A test.', write(TEST_FILE, LEAP_TEST))],
  },
  { stage: 'GREEN', test: ITEM, turns: [say('The rule.', write('leap.py', LEAP))] },
  { stage: 'REFACTOR', test: ITEM, turns: [say('Nothing to tidy.')] },
];

describe.skipIf(tools.missing)(`ratchet bench polyglot --mode tdd${tools.note}${sandbox.note}`, () => {
  let dir: string;
  let model: ScriptedModel;
  let result: CliResult;
  const out = (): string => join(dir, 'out');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-tdd-'));
    const benchmark = join(dir, 'polyglot-benchmark');
    for (const language of ['python', 'cpp']) {
      cpSync(join(POLYGLOT_FIXTURE, language), join(benchmark, language), { recursive: true });
    }
    model = await startScriptedModel({ items: [ITEM], steps });
    result = await runBenchPolyglot({
      dir,
      benchmark: benchmark,
      mode: 'tdd',
      tries: 2,
      out: out(),
      baseUrl: model.server.url,
      flags: sandbox.flags,
    });
  }, 300_000);

  afterAll(async () => {
    await model?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('solves the exercise through a tdd run, grades it with the official tests, and skips C++', async () => {
    expect(model.brain.unexpected).toEqual([]);
    expect(model.brain.unplayed()).toEqual([]);
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('skip cpp: --mode tdd needs per-test results');
    const records = await readRecords(out());
    expect(records.map((record) => [record.language, record.exercise, record.mode, record.passedAtTry])).toEqual([
      ['python', 'leap', 'tdd', 1],
    ]);
    const [leap] = records;
    // The tdd run and the run that graded it.
    expect(leap?.runIds).toHaveLength(2);
    expect(leap?.tries[0]).toMatchObject({ stage: 'completed', passed: true, tests: { failed: 0 } });
    // The official tests ran beside the model's own: 4 of theirs and 1 of the model's.
    expect(leap?.tries[0]?.tests.passed).toBe(5);
    expect(leap?.tries[0]?.modelCalls).toBe(model.brain.calls.length);
  });

  it('recounts the honesty figures from the run branch and its notes, into the record, the summary and the report', async () => {
    const [leap] = await readRecords(out());
    expect(leap?.honesty).toEqual({ redCommits: 1, redFailing: 1, greenCommits: 1, greenPassing: 1 });
    const line =
      'TDD honesty: 1 of 1 RED checkpoints (100%) had their new test failing when committed; 1 of 1 GREEN checkpoints (100%) a passing suite.';
    expect(result.stdout).toContain(line);
    const summary: unknown = JSON.parse(readFileSync(join(out(), 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ honesty: { redFailingPercent: 100, greenPassingPercent: 100 } });
    const { skippedLanguages } = z
      .object({ skippedLanguages: z.array(z.object({ language: z.string(), reason: z.string() })) })
      .parse(summary);
    expect(skippedLanguages.map((skipped) => skipped.language)).toEqual(['cpp']);
    expect(summary).toEqual({
      mode: 'tdd',
      tries: 2,
      skippedLanguages,
      ...recountBenchSummary(await readRecords(out()), 2),
    });
    const report = await runCli(['bench', 'polyglot', 'report', out(), '--json'], {
      cwd: dir,
      env: { RATCHET_HOME: join(dir, 'home') },
      timeoutMs: 60_000,
    });
    expect(report.exitCode, report.stderr).toBe(0);
    expect(report.stdout).toContain('"redFailing":1');
    expect(readFileSync(join(out(), 'report.html'), 'utf8')).toContain(`<p id="honesty">${line}</p>`);
  });

  it('merges the tdd run into the exercise repository, and never shows the model the official tests', () => {
    const repo = join(out(), 'work', 'python', 'leap');
    const subjects = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: repo, encoding: 'utf8' });
    expect(subjects).toContain(`test: ${ITEM}`);
    expect(subjects).toContain(`feat: ${ITEM}`);
    const files = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).split('\n');
    expect(files).not.toContain('leap_test.py');
    const seen = JSON.stringify(model.server.requests);
    expect(seen).toContain('probe-done');
    expect(seen).not.toContain('assertIs(');
    expect(seen).not.toContain('test_year_divisible_by_400_is_leap');
  });
});
