/**
 * `ratchet bench polyglot --mode tdd --tries 2`: a first tdd run whose own tests pass but the
 * official ones do not (it forgot the century rule); the second try, a tdd run from the first
 * one's merged commit, is given the first lines of the official tests' output in its feature and
 * passes. The honesty figures count both runs' checkpoints.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { startScriptedModel, type ScriptedModel } from '../support/e2e-run.js';
import { POLYGLOT_FIXTURE, runBenchPolyglot } from '../support/polyglot-brain.js';
import type { CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { planSteps, say, testListMarkdown, write, type ScriptStep } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('pytest');
const sandbox = sandboxForThisMachine();

const BY_FOUR = 'leap_year is true for a year divisible by 4';
const CENTURY = 'leap_year is false for a century not divisible by 400';
const TEST_FILE = 'test_leap_rules.py';
const TEST_BY_FOUR = 'from leap import leap_year\n\n\ndef test_by_four():\n    assert leap_year(1996) is True\n';
const TEST_CENTURY = `${TEST_BY_FOUR}\n\ndef test_century():\n    assert leap_year(1900) is False\n`;

const pick = (text: string) => ({
  name: 'StructuredOutput' as const,
  input: { currentTest: { description: text, testFile: TEST_FILE, implFile: 'leap.py' } },
});

const steps: ScriptStep[] = [
  // Try 1: one item, the century rule forgotten.
  ...planSteps('leap', [{ text: BY_FOUR, testFile: TEST_FILE, implFile: 'leap.py' }]),
  { stage: 'RED', test: BY_FOUR, turns: [say('A test.', write(TEST_FILE, TEST_BY_FOUR))] },
  {
    stage: 'GREEN',
    test: BY_FOUR,
    turns: [say('Divisible by 4.', write('leap.py', 'def leap_year(year):\n    return year % 4 == 0\n'))],
  },
  { stage: 'REFACTOR', test: BY_FOUR, turns: [say('Nothing to tidy.')] },
  // Try 2: its first PLAN sees every item checked (attempt 2 of "no item") and adds the century rule.
  {
    stage: 'PLAN',
    test: null,
    attempt: 2,
    turns: [
      say(
        'The official tests want the century rule.',
        write(
          'test-list.md',
          testListMarkdown('leap', [BY_FOUR, CENTURY]).replace(`- [ ] ${BY_FOUR}`, `- [x] ${BY_FOUR}`),
        ),
      ),
      say(`Next: ${CENTURY}.`, pick(CENTURY)),
    ],
  },
  { stage: 'RED', test: CENTURY, turns: [say('A test.', write(TEST_FILE, TEST_CENTURY))] },
  {
    stage: 'GREEN',
    test: CENTURY,
    turns: [
      say(
        'The rule.',
        write('leap.py', 'def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n'),
      ),
    ],
  },
  { stage: 'REFACTOR', test: CENTURY, turns: [say('Nothing to tidy.')] },
  {
    stage: 'PLAN',
    test: null,
    attempt: 3,
    turns: [say('Every item is checked.', { name: 'StructuredOutput', input: { currentTest: null } })],
  },
];

describe.skipIf(tools.missing)(`ratchet bench polyglot --mode tdd, a second try${tools.note}${sandbox.note}`, () => {
  let dir: string;
  let model: ScriptedModel;
  let result: CliResult;
  const out = (): string => join(dir, 'out');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-tdd-retry-'));
    const benchmark = join(dir, 'polyglot-benchmark');
    cpSync(join(POLYGLOT_FIXTURE, 'python'), join(benchmark, 'python'), { recursive: true });
    model = await startScriptedModel({ items: [BY_FOUR, CENTURY], steps });
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

  it('gives the second tdd run the official tests’ first lines, and it passes', async () => {
    expect(model.brain.unexpected).toEqual([]);
    expect(model.brain.unplayed()).toEqual([]);
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    const [leap] = await readRecords(out());
    expect(leap?.tries.map((entry) => [entry.try, entry.passed])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(leap?.passedAtTry).toBe(2);
    // Two tdd runs and two gradings.
    expect(leap?.runIds).toHaveLength(4);
    const secondPlan = model.server.requests.find((request) =>
      JSON.stringify(request.body ?? null).includes('A previous attempt failed the official tests'),
    );
    expect(JSON.stringify(secondPlan?.body)).toContain('test_year_divisible_by_100_not_by_400_is_common');
    expect(leap?.honesty).toEqual({ redCommits: 2, redFailing: 2, greenCommits: 2, greenPassing: 2 });
  });
});
