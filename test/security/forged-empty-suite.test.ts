/**
 * An empty suite is readable (`go test`'s `[no test files]`, cargo's `running 0 tests`), so an
 * attacker's code tries to pass for one: a Go `init()` that prints the go command's empty-suite
 * lines and exits 0 before any test runs, and a Rust `.init_array` constructor that prints what
 * an empty cargo binary prints and exits 0 before libtest's `main`. Through the built CLI with a
 * scripted model: as a `--mode direct` solution graded by the official tests, and as the GREEN
 * of a `--mode tdd` run whose RED test fails. Each attempt must be refused (no exercise passes,
 * no GREEN checkpoint), for the reason that the results cannot be trusted, and the benchmark
 * checkout must be as it was.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords, type ExerciseRecord } from '../../src/bench/polyglot/results.js';
import { E2E_API_KEY, startScriptedModel } from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import {
  createPolyglotBrain,
  POLYGLOT_FIXTURE,
  runBenchPolyglot,
  type PolyglotBrain,
} from '../support/polyglot-brain.js';
import type { CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { planSteps, say, write, type ScriptStep } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('go', 'cargo');
const sandbox = sandboxForThisMachine();

/** Go: the go command's lines for a package without test files, then exit 0, before any test. */
const FORGED_HAMMING = `package hamming

import (
	"fmt"
	"os"
)

func init() {
	fmt.Println("?   \\thamming\\t[no test files]")
	fmt.Fprintln(os.Stderr, \`{"Action":"skip","Package":"hamming","Elapsed":0}\`)
	os.Exit(0)
}

func Distance(a, b string) (int, error) {
	return 0, nil
}
`;

/** Rust: what an empty test binary prints, from a constructor that runs before the tests, then exit 0. */
const FORGED_RAINDROPS = `pub fn raindrops(n: u32) -> String {
    n.to_string()
}

#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = write!(out, "\\nrunning 0 tests\\n\\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\\n");
    let _ = out.flush();
    std::process::exit(0);
}
`;

/** Every file under `dir` with a hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path.slice(dir.length + 1)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return files;
}

function benchmarkOf(dir: string): string {
  const benchmark = join(dir, 'polyglot-benchmark');
  for (const language of ['go', 'rust']) {
    cpSync(join(POLYGLOT_FIXTURE, language), join(benchmark, language), { recursive: true });
  }
  return benchmark;
}

describe.skipIf(tools.missing)(
  `forged empty suites: a direct-mode solution that prints one${tools.note}${sandbox.note}`,
  () => {
    let dir: string;
    let benchmark: string;
    let before: Record<string, string>;
    let server: FakeAnthropicServer;
    let brain: PolyglotBrain;
    let result: CliResult;
    let records: ExerciseRecord[];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'ratchet-forged-empty-'));
      benchmark = benchmarkOf(dir);
      before = snapshot(benchmark);
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      brain = createPolyglotBrain({
        wrongFirst: { hamming: { 'hamming.go': FORGED_HAMMING }, raindrops: { 'src/lib.rs': FORGED_RAINDROPS } },
      });
      server.setFallback((request) => brain.reply(request));
      result = await runBenchPolyglot({
        dir,
        benchmark,
        mode: 'direct',
        tries: 1,
        out: join(dir, 'out'),
        baseUrl: server.url,
        flags: sandbox.flags,
      });
      records = await readRecords(join(dir, 'out'));
    }, 600_000);

    afterAll(async () => {
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('does not pass a Go solution whose init() prints "[no test files]" and exits 0', () => {
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(brain.unexpected).toEqual([]);
      const hamming = records.find((record) => record.exercise === 'hamming');
      // The forgery ran: the official tests' output holds its line, and no test result.
      expect(hamming?.tries[0]?.testOutputHead).toContain('[no test files]');
      expect(hamming?.tries[0]).toMatchObject({ passed: false, testExitCode: 0, tests: { total: 0 } });
      expect(hamming?.passedAtTry).toBeNull();
    });

    it('does not pass a Rust solution whose constructor prints an empty cargo run and exits 0', () => {
      const raindrops = records.find((record) => record.exercise === 'raindrops');
      expect(raindrops?.tries[0]?.testOutputHead).toContain('running 0 tests');
      expect(raindrops?.tries[0]?.testOutputHead).not.toMatch(/running [1-9]\d* tests?/);
      expect(raindrops?.tries[0]).toMatchObject({ passed: false, testExitCode: 0, tests: { total: 0 } });
      expect(raindrops?.passedAtTry).toBeNull();
    });

    it('leaves the benchmark checkout as it was', () => {
      expect(snapshot(benchmark)).toEqual(before);
    });
  },
);

interface GreenForgery {
  language: string;
  exercise: string;
  item: string;
  testFile: string;
  test: string;
  implFile: string;
  stub: string;
  forged: string;
  /** What GREEN's retry is told: the gate that refused the forged results. */
  refusal: string;
}

const GO_GREEN: GreenForgery = {
  language: 'go',
  exercise: 'hamming',
  item: 'Distance counts the positions that differ',
  testFile: 'rules_test.go',
  test: 'package hamming\n\nimport "testing"\n\nfunc TestOneDifference(t *testing.T) {\n\tif d, _ := Distance("GA", "GG"); d != 1 {\n\t\tt.Fatalf("got %d", d)\n\t}\n}\n',
  implFile: 'hamming.go',
  stub: 'package hamming\n\nfunc Distance(a, b string) (int, error) {\n\treturn 0, nil\n}\n',
  forged: FORGED_HAMMING,
  refusal: 'no per-test result could be read',
};

const RUST_GREEN: GreenForgery = {
  language: 'rust',
  exercise: 'raindrops',
  item: 'a multiple of 3 sounds Pling',
  testFile: 'tests/rules.rs',
  test: '#[test]\nfn three_is_pling() {\n    assert_eq!(raindrops::raindrops(3), "Pling");\n}\n',
  implFile: 'src/lib.rs',
  stub: 'pub fn raindrops(n: u32) -> String {\n    n.to_string()\n}\n',
  forged: FORGED_RAINDROPS,
  refusal: 'tests/rules.rs declare tests',
};

/** A tdd run whose RED is honest and whose every GREEN attempt writes the forger. */
async function greenForgery(attack: GreenForgery): Promise<{
  result: CliResult;
  record: ExerciseRecord | undefined;
  seen: string;
  subjects: string;
  unexpected: string[];
  unchanged: boolean;
}> {
  const dir = mkdtempSync(join(tmpdir(), `ratchet-forged-green-${attack.language}-`));
  const benchmark = join(dir, 'polyglot-benchmark');
  cpSync(join(POLYGLOT_FIXTURE, attack.language), join(benchmark, attack.language), { recursive: true });
  const before = snapshot(benchmark);
  const { item, testFile, implFile } = attack;
  const green = (attempt: number): ScriptStep => ({
    stage: 'GREEN',
    test: item,
    attempt,
    turns: [say('Done, the suite is clean.', write(implFile, attack.forged))],
  });
  const steps: ScriptStep[] = [
    ...planSteps(attack.exercise, [{ text: item, testFile, implFile }]).slice(0, 1),
    {
      stage: 'RED',
      test: item,
      turns: [say('A failing test.', write(testFile, attack.test), write(implFile, attack.stub))],
    },
    green(1),
    green(2),
    green(3),
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
    });
    const [record] = await readRecords(join(dir, 'out'));
    const repo = join(dir, 'out', 'work', attack.language, attack.exercise);
    const subjects = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: repo, encoding: 'utf8' });
    return {
      result,
      record,
      seen: JSON.stringify(model.server.requests),
      subjects,
      unexpected: model.brain.unexpected,
      unchanged: JSON.stringify(snapshot(benchmark)) === JSON.stringify(before),
    };
  } finally {
    await model.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(tools.missing)(
  `forged empty suites: a tdd run's GREEN that prints one${tools.note}${sandbox.note}`,
  () => {
    it.each([GO_GREEN, RUST_GREEN])(
      'refuses the forged GREEN of $language as untrusted results',
      async (attack) => {
        const run = await greenForgery(attack);
        expect(run.result.exitCode, `${run.result.stdout}\n${run.result.stderr}`).toBe(0);
        expect(run.unexpected).toEqual([]);
        // Each GREEN retry is told why: the results of the forged run cannot be taken for a pass.
        expect(run.seen).toContain('The test results cannot be taken for a pass');
        expect(run.seen).toContain(attack.refusal);
        // No GREEN checkpoint; RED's stands, and the exercise is not passed.
        expect(run.subjects).toContain(`test: ${attack.item}`);
        expect(run.subjects).not.toContain(`feat: ${attack.item}`);
        expect(run.record?.honesty).toMatchObject({ greenCommits: 0 });
        expect(run.record?.passedAtTry).toBeNull();
        expect(run.unchanged).toBe(true);
      },
      600_000,
    );
  },
);
