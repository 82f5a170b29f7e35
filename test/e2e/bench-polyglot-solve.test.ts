/**
 * `ratchet bench polyglot --mode solve` end to end: the built CLI runs a `ratchet solve` run per
 * try on the fixture's Python exercise against the fake Anthropic server, whose scripted model
 * answers the solve passes (META_PLAN, PART_PLAN, IMPLEMENT with a SEARCH/REPLACE edit,
 * ADJUSTMENT); the run's branch is merged into the exercise's repository, then graded by the
 * official tests, which the model never saw. C++ (tests run by the build, no per-test results) is
 * skipped with its reason.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { E2E_API_KEY } from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { POLYGLOT_FIXTURE, POLYGLOT_JS_CACHE, runBenchPolyglot } from '../support/polyglot-brain.js';
import type { CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { anthropicPrompt } from '../support/solve-fixture.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('pytest');
const sandbox = sandboxForThisMachine();

const STEP = {
  id: 's1',
  description: 'Write leap_year',
  targetFiles: ['leap.py'],
  targetSymbols: ['leap_year'],
  dependsOn: [],
};
const EDIT = `<edit file="leap.py">
<search>
    pass
</search>
<replacement>
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
</replacement>
</edit>
<edit file="test_leap_rules.py">
<search>
</search>
<replacement>
from leap import leap_year


def test_2000_is_leap():
    assert leap_year(2000) is True
</replacement>
</edit>`;

const LEAP_ANSWERS = { step: STEP, edit: EDIT };

/** The solve passes for an exercise (default leap), by the stage line of the system prompt; anything else is unexpected. */
function answer(system: string, user: string, unexpected: string[], exercise = LEAP_ANSWERS): string {
  const stage = system.split('\n')[0]?.trim() ?? '';
  switch (stage) {
    case 'Stage: META_PLAN':
      return JSON.stringify({
        taskSummary: 'Write leap_year',
        parts: [{ id: 'p1', description: 'The solution', affectedFiles: exercise.step.targetFiles, dependsOn: [] }],
        rationale: 'One small function.',
      });
    case 'Stage: PRECISION':
      return JSON.stringify({ grades: [{ path: exercise.step.targetFiles[0], relevance: 3 }] });
    case 'Stage: PART_PLAN':
      return JSON.stringify({ partId: 'p1', taskSummary: 'Solve it', steps: [exercise.step], rationale: 'one step' });
    case 'Stage: IMPLEMENT':
      // Told the repository has no tests, it adds one with the solution (solve's gate needs a passing suite).
      if (!user.includes('add tests of your own')) unexpected.push('IMPLEMENT without the no-tests line');
      return exercise.edit;
    case 'Stage: ADJUSTMENT':
      return JSON.stringify({ revisedSteps: [], rationale: 'Done.', changesMade: [] });
    default:
      unexpected.push(stage);
      return 'I do not know this stage.';
  }
}

describe.skipIf(tools.missing)(`ratchet bench polyglot --mode solve${tools.note}${sandbox.note}`, () => {
  let dir: string;
  let server: FakeAnthropicServer;
  let result: CliResult;
  const unexpected: string[] = [];
  const out = (): string => join(dir, 'out');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-solve-'));
    const benchmark = join(dir, 'polyglot-benchmark');
    for (const language of ['python', 'cpp']) {
      cpSync(join(POLYGLOT_FIXTURE, language), join(benchmark, language), { recursive: true });
    }
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => ({
      kind: 'message',
      content: [
        { type: 'text', text: answer(anthropicPrompt(request).system, anthropicPrompt(request).user, unexpected) },
      ],
    }));
    result = await runBenchPolyglot({
      dir,
      benchmark: benchmark,
      mode: 'solve',
      tries: 2,
      out: out(),
      baseUrl: server.url,
      flags: sandbox.flags,
    });
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('solves the exercise through a solve run, merges it, grades it with the official tests, and skips C++', async () => {
    expect(unexpected).toEqual([]);
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    // Solve's gate cannot read a build's exit code as test results: C++ is skipped, not failed.
    expect(result.stdout).toContain(
      "skip cpp: --mode solve needs per-test results, and cpp's tests report only an exit code",
    );
    const records = await readRecords(out());
    expect(records.map((record) => [record.language, record.exercise, record.mode, record.passedAtTry])).toEqual([
      ['python', 'leap', 'solve', 1],
    ]);
    const [leap] = records;
    expect(leap?.runIds).toHaveLength(2);
    expect(leap?.tries[0]).toMatchObject({ stage: 'completed', passed: true, tests: { passed: 5, failed: 0 } });
    expect(leap).not.toHaveProperty('honesty');
    const repo = join(out(), 'work', 'python', 'leap');
    expect(execFileSync('git', ['show', 'main:leap.py'], { cwd: repo, encoding: 'utf8' })).toContain('year % 400');
    // The model never saw the official tests.
    expect(JSON.stringify(server.requests)).not.toContain('assertIs(');
  });
});

const go = toolchain('go');
const HAMMING_ANSWERS = {
  step: {
    id: 's1',
    description: 'Write Distance and a test of it',
    targetFiles: ['hamming.go', 'rules_test.go'],
    targetSymbols: ['Distance'],
    dependsOn: [],
  },
  edit: `<edit file="hamming.go">
<search>
	panic("Implement the Distance function")
</search>
<replacement>
	if len(a) != len(b) {
		return 0, errors.New("strands differ in length")
	}
	count := 0
	for i := range a {
		if a[i] != b[i] {
			count++
		}
	}
	return count, nil
</replacement>
</edit>
<edit file="hamming.go">
<search>
package hamming
</search>
<replacement>
package hamming

import "errors"
</replacement>
</edit>
<edit file="rules_test.go">
<search>
</search>
<replacement>
package hamming

import "testing"

func TestOneDifference(t *testing.T) {
	if d, err := Distance("GGACTGA", "GGACGGA"); err != nil || d != 1 {
		t.Fatalf("got %d, %v", d, err)
	}
}
</replacement>
</edit>`,
};

describe.skipIf(go.missing)(`ratchet bench polyglot --mode solve on Go${go.note}${sandbox.note}`, () => {
  it('solves hamming through a solve run with go test, and grades it with the official tests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-solve-go-'));
    const benchmark = join(dir, 'polyglot-benchmark');
    cpSync(join(POLYGLOT_FIXTURE, 'go'), join(benchmark, 'go'), { recursive: true });
    const unexpected: string[] = [];
    const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => {
      const prompt = anthropicPrompt(request);
      return {
        kind: 'message',
        content: [{ type: 'text', text: answer(prompt.system, prompt.user, unexpected, HAMMING_ANSWERS) }],
      };
    });
    try {
      const run = await runBenchPolyglot({
        dir,
        benchmark: benchmark,
        mode: 'solve',
        tries: 1,
        out: join(dir, 'out'),
        baseUrl: server.url,
        flags: sandbox.flags,
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(unexpected).toEqual([]);
      const [hamming] = await readRecords(join(dir, 'out'));
      expect([hamming?.exercise, hamming?.mode, hamming?.passedAtTry], run.stdout).toEqual(['hamming', 'solve', 1]);
      expect(JSON.stringify(server.requests)).not.toContain('TestDistanceOfUnequalStrandsIsAnError');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

const jest = toolchain('polyglot-jest');
const REVERSE_ANSWERS = {
  step: {
    id: 's1',
    description: 'Write reverse and a test of it',
    targetFiles: ['reverse-string.js', 'reverse-rules.spec.js'],
    targetSymbols: ['reverse'],
    dependsOn: [],
  },
  edit: `<edit file="reverse-string.js">
<search>
export const reverse = () => {
  throw new Error('Remove this line and implement the function');
};
</search>
<replacement>
export const reverse = (text) => [...text].reverse().join('');
</replacement>
</edit>
<edit file="reverse-rules.spec.js">
<search>
</search>
<replacement>
import { reverse } from './reverse-string';

test('a word', () => {
  expect(reverse('stressed')).toEqual('desserts');
});
</replacement>
</edit>`,
};

describe.skipIf(jest.missing)(`ratchet bench polyglot --mode solve on JavaScript${jest.note}${sandbox.note}`, () => {
  it('solves reverse-string through a solve run with jest, and grades it with the official tests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-solve-js-'));
    const benchmark = join(dir, 'polyglot-benchmark');
    cpSync(join(POLYGLOT_FIXTURE, 'javascript'), join(benchmark, 'javascript'), { recursive: true });
    const unexpected: string[] = [];
    const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => {
      const prompt = anthropicPrompt(request);
      return {
        kind: 'message',
        content: [{ type: 'text', text: answer(prompt.system, prompt.user, unexpected, REVERSE_ANSWERS) }],
      };
    });
    try {
      const run = await runBenchPolyglot({
        dir,
        benchmark: benchmark,
        mode: 'solve',
        tries: 1,
        out: join(dir, 'out'),
        baseUrl: server.url,
        flags: sandbox.flags,
        jsCache: POLYGLOT_JS_CACHE,
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(unexpected).toEqual([]);
      const [reverse] = await readRecords(join(dir, 'out'));
      expect([reverse?.exercise, reverse?.mode, reverse?.passedAtTry], run.stdout).toEqual([
        'reverse-string',
        'solve',
        1,
      ]);
      // The official tests (three, the skipped ones enabled) ran beside the model's own.
      expect(reverse?.tries[0]?.tests).toMatchObject({ passed: 4, failed: 0 });
      expect(JSON.stringify(server.requests)).not.toContain('a sentence with punctuation');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
