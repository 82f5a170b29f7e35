/**
 * `ratchet bench polyglot --mode tdd` on the runners whose suite starts empty without a failure:
 * `go test ./...` ("[no test files]", exit 0), `cargo test` ("running 0 tests", exit 0) and jest
 * ("No tests found", exit 1). The tdd run's baseline reads that as an empty suite, the scripted
 * model works through one test-list item (PLAN, RED with a stub that returns a wrong value,
 * GREEN with the example solution, REFACTOR), and the merged result passes the official tests,
 * which the model never saw.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecords, type ExerciseRecord } from '../../src/bench/polyglot/results.js';
import { startScriptedModel } from '../support/e2e-run.js';
import { exampleSolution, POLYGLOT_FIXTURE, POLYGLOT_JS_CACHE, runBenchPolyglot } from '../support/polyglot-brain.js';
import type { CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { planSteps, say, write, type ScriptStep } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

const sandbox = sandboxForThisMachine();

interface TddCase {
  language: string;
  exercise: string;
  item: string;
  testFile: string;
  test: string;
  implFile: string;
  /** RED's stub: the function exists and returns a wrong value, so the new test fails by assertion. */
  stub: string;
  /** A line of the official tests the model must never see. */
  officialLine: string;
}

/** Runs the bench on one exercise in tdd mode with a model scripted for one item; its record and the CLI's result. */
async function tddBench(
  tddCase: TddCase,
): Promise<{ result: CliResult; record: ExerciseRecord | undefined; seen: string; subjects: string }> {
  const dir = mkdtempSync(join(tmpdir(), `ratchet-polyglot-tdd-${tddCase.language}-`));
  const benchmark = join(dir, 'polyglot-benchmark');
  cpSync(join(POLYGLOT_FIXTURE, tddCase.language), join(benchmark, tddCase.language), { recursive: true });
  const solution = exampleSolution(tddCase.language, tddCase.exercise)[tddCase.implFile] ?? '';
  const { item, testFile, implFile } = tddCase;
  const steps: ScriptStep[] = [
    ...planSteps(tddCase.exercise, [{ text: item, testFile, implFile }]),
    {
      stage: 'RED',
      test: item,
      turns: [
        say('A test, and a stub it can fail against.', write(testFile, tddCase.test), write(implFile, tddCase.stub)),
      ],
    },
    { stage: 'GREEN', test: item, turns: [say('The solution.', write(implFile, solution))] },
    { stage: 'REFACTOR', test: item, turns: [say('Nothing to tidy.')] },
  ];
  const model = await startScriptedModel({ items: [item], steps });
  try {
    const result = await runBenchPolyglot({
      dir,
      benchmark,
      mode: 'tdd',
      tries: 1,
      out: join(dir, 'out'),
      baseUrl: model.server.url,
      flags: sandbox.flags,
      jsCache: POLYGLOT_JS_CACHE,
    });
    expect(model.brain.unexpected).toEqual([]);
    expect(model.brain.unplayed()).toEqual([]);
    const [record] = await readRecords(join(dir, 'out'));
    const repo = join(dir, 'out', 'work', tddCase.language, tddCase.exercise);
    const subjects = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: repo, encoding: 'utf8' });
    return { result, record, seen: JSON.stringify(model.server.requests), subjects };
  } finally {
    await model.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectSolved(run: Awaited<ReturnType<typeof tddBench>>, tddCase: TddCase): void {
  const { result, record } = run;
  expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
  expect(record?.error, result.stdout).toBeUndefined();
  expect([record?.status, record?.mode, record?.passedAtTry]).toEqual(['completed', 'tdd', 1]);
  expect(record?.tries[0]).toMatchObject({ stage: 'completed', passed: true, tests: { failed: 0 } });
  expect(record?.honesty).toEqual({ redCommits: 1, redFailing: 1, greenCommits: 1, greenPassing: 1 });
  expect(run.subjects).toContain(`test: ${tddCase.item}`);
  expect(run.subjects).toContain(`feat: ${tddCase.item}`);
  expect(run.seen).not.toContain(tddCase.officialLine);
}

const GO: TddCase = {
  language: 'go',
  exercise: 'hamming',
  item: 'Distance counts the positions that differ',
  testFile: 'rules_test.go',
  test: [
    'package hamming',
    '',
    'import "testing"',
    '',
    'func TestOneDifference(t *testing.T) {',
    '\tif d, err := Distance("GGACTGA", "GGACGGA"); err != nil || d != 1 {',
    '\t\tt.Fatalf("got %d, %v", d, err)',
    '\t}',
    '}',
    '',
  ].join('\n'),
  implFile: 'hamming.go',
  stub: 'package hamming\n\nfunc Distance(a, b string) (int, error) {\n\treturn 0, nil\n}\n',
  officialLine: 'TestDistanceOfUnequalStrandsIsAnError',
};

const RUST: TddCase = {
  language: 'rust',
  exercise: 'raindrops',
  item: 'a multiple of 3 sounds Pling',
  testFile: 'tests/rules.rs',
  test: '#[test]\nfn three_is_pling() {\n    assert_eq!(raindrops::raindrops(3), "Pling");\n}\n',
  implFile: 'src/lib.rs',
  stub: 'pub fn raindrops(n: u32) -> String {\n    n.to_string()\n}\n',
  officialLine: 'the_sound_for_105_is_pling_plang_plong',
};

const JAVASCRIPT: TddCase = {
  language: 'javascript',
  exercise: 'reverse-string',
  item: 'reverse turns a word around',
  testFile: 'reverse-rules.spec.js',
  test: "import { reverse } from './reverse-string';\n\ntest('a word', () => {\n  expect(reverse('stressed')).toEqual('desserts');\n});\n",
  implFile: 'reverse-string.js',
  stub: "export const reverse = (text) => '';\n",
  officialLine: 'a sentence with punctuation',
};

const go = toolchain('go');
describe.skipIf(go.missing)(`ratchet bench polyglot --mode tdd on Go${go.note}${sandbox.note}`, () => {
  it('starts from the empty suite of go test, solves hamming through a tdd run, and passes the official tests', async () => {
    expectSolved(await tddBench(GO), GO);
  }, 300_000);
});

const cargo = toolchain('cargo');
describe.skipIf(cargo.missing)(`ratchet bench polyglot --mode tdd on Rust${cargo.note}${sandbox.note}`, () => {
  it('starts from the empty suite of cargo test, solves raindrops through a tdd run, and passes the official tests', async () => {
    expectSolved(await tddBench(RUST), RUST);
  }, 300_000);
});

const jest = toolchain('polyglot-jest');
describe.skipIf(jest.missing)(`ratchet bench polyglot --mode tdd on JavaScript${jest.note}${sandbox.note}`, () => {
  it('starts from jest finding no tests, solves reverse-string through a tdd run, and passes the official tests', async () => {
    expectSolved(await tddBench(JAVASCRIPT), JAVASCRIPT);
  }, 300_000);
});
