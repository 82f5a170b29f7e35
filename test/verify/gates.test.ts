import { describe, expect, it } from 'vitest';
import type { CheckResult, TestCaseResult, TestRunResult } from '../../src/core/verification.js';
import { greenGate, redGate, verifyGate, type GateDecision } from '../../src/verify/gates.js';
import { countTests } from '../../src/verify/run-tests.js';

function pass(id: string): TestCaseResult {
  return { id, name: id.split('::')[1] ?? id, file: id.split('::')[0] ?? null, status: 'passed' };
}
function fail(
  id: string,
  failureKind: TestCaseResult['failureKind'] = 'assertion',
  message = 'expected 2, got 3',
): TestCaseResult {
  return { ...pass(id), status: 'failed', failureKind, message };
}
function skip(id: string): TestCaseResult {
  return { ...pass(id), status: 'skipped' };
}
function run(tests: TestCaseResult[], extra: Partial<TestRunResult> = {}): TestRunResult {
  const failed = tests.some((test) => test.status === 'failed');
  return {
    command: 'npm test',
    exitCode: failed ? 1 : 0,
    timedOut: false,
    durationMs: 10,
    output: 'runner output tail',
    tests,
    collectionErrors: [],
    source: 'junit-xml',
    counts: countTests(tests),
    ...extra,
  };
}
function rejected(decision: GateDecision): Extract<GateDecision, { accepted: false }> {
  if (decision.accepted) throw new Error(`expected a rejection, got: ${decision.summary}`);
  return decision;
}

const BASELINE = run([pass('a.test.js::one'), pass('a.test.js::two')]);

describe('redGate', () => {
  it('accepts a new test failing by assertion while the old ones still pass', () => {
    const decision = redGate(BASELINE, run([pass('a.test.js::one'), pass('a.test.js::two'), fail('a.test.js::new')]));
    expect(decision).toMatchObject({ accepted: true, newFailing: [expect.objectContaining({ id: 'a.test.js::new' })] });
  });

  it('accepts a new test in a baseline that already had a failing test, ignoring that one', () => {
    const before = run([pass('a::one'), fail('a::old', 'error')]);
    const decision = redGate(before, run([pass('a::one'), fail('a::old', 'error'), fail('a::new')]));
    expect(decision.accepted).toBe(true);
  });

  it('accepts a previously skipped test that now fails by assertion', () => {
    const before = run([pass('a::one'), { ...pass('a::later'), status: 'skipped' }]);
    expect(redGate(before, run([pass('a::one'), fail('a::later')])).accepted).toBe(true);
  });

  it('rejects passed-immediately when the new test passes', () => {
    const decision = rejected(redGate(BASELINE, run([...BASELINE.tests, pass('a.test.js::new')])));
    expect(decision.reason).toBe('passed-immediately');
    expect(decision.subjects).toEqual(['a.test.js::new']);
    expect(decision.feedback).toContain('a.test.js::new');
  });

  it('rejects no-new-test when nothing changed', () => {
    const decision = rejected(redGate(BASELINE, BASELINE));
    expect(decision.reason).toBe('no-new-test');
  });

  it('explains no-new-test when only an exit code was available', () => {
    const decision = rejected(redGate(run([], { source: 'exit-code' }), run([], { source: 'exit-code', exitCode: 1 })));
    expect(decision.reason).toBe('no-new-test');
    expect(decision.feedback).toContain('only an exit code');
  });

  it('rejects not-assertion with the kinds when the new test errors', () => {
    const after = run([
      ...BASELINE.tests,
      fail('a.test.js::new', 'error', "TypeError: Cannot read properties of null (reading 'x')"),
    ]);
    const decision = rejected(redGate(BASELINE, after));
    expect(decision.reason).toBe('not-assertion');
    expect(decision.feedback).toContain('failed with: error');
    expect(decision.feedback).toContain('TypeError');
    expect(decision.feedback).toContain('runner output tail');
  });

  it('rejects not-assertion for a per-test import error and a per-test timeout', () => {
    const after = run([...BASELINE.tests, fail('a::imports', 'collection'), fail('a::slow', 'timeout')]);
    const decision = rejected(redGate(BASELINE, after));
    expect(decision.reason).toBe('not-assertion');
    expect(decision.feedback).toContain('collection, timeout');
  });

  it('rejects regression naming the tests that stopped passing or disappeared', () => {
    const after = run([fail('a.test.js::one', 'assertion', 'broke it'), fail('a.test.js::new')]);
    const decision = rejected(redGate(BASELINE, after));
    expect(decision.reason).toBe('regression');
    expect(decision.subjects).toEqual(['a.test.js::one', 'a.test.js::two']);
    expect(decision.feedback).toContain('broke it');
    expect(decision.feedback).toContain('a.test.js::two: no longer reported');
  });

  it('counts a test that is now skipped as a regression', () => {
    const after = run([
      pass('a.test.js::one'),
      { ...pass('a.test.js::two'), status: 'skipped' },
      fail('a.test.js::new'),
    ]);
    expect(rejected(redGate(BASELINE, after)).reason).toBe('regression');
  });

  it('rejects collection-error before looking at tests', () => {
    const after = run([...BASELINE.tests, fail('test/new.test.js::(collection)', 'collection')], {
      collectionErrors: ["test/new.test.js: Error [ERR_MODULE_NOT_FOUND]: Cannot find module '../src/new.js'"],
    });
    const decision = rejected(redGate(BASELINE, after));
    expect(decision.reason).toBe('collection-error');
    expect(decision.subjects).toEqual(['test/new.test.js']);
    expect(decision.feedback).toContain('ERR_MODULE_NOT_FOUND');
  });

  it('names a collection error by its file or module, else by its first line', () => {
    const after = run(BASELINE.tests, {
      collectionErrors: [
        'tests/it.rs: error[E0425]: cannot find function `multiply`\n --> tests/it.rs:1:40',
        "error[E0463]: can't find crate for `serde`\n  |",
        'tests.test_new: ImportError: Failed to import test module: tests.test_new',
        'example.com/m/sub: build failed\nsub/x_test.go:6:12: undefined: Y',
        '[ERROR] COMPILATION ERROR : \n[ERROR] Foo.java:[1,2] cannot find symbol',
      ],
    });
    expect(rejected(redGate(BASELINE, after)).subjects).toEqual([
      'tests/it.rs',
      "error[E0463]: can't find crate for `serde`",
      'tests.test_new',
      'example.com/m/sub',
      '[ERROR] COMPILATION ERROR :',
    ]);
  });

  it('rejects timeout first', () => {
    const after = run([...BASELINE.tests, fail('(run)::timeout', 'timeout')], {
      timedOut: true,
      exitCode: null,
      collectionErrors: ['x'],
    });
    expect(rejected(redGate(BASELINE, after)).reason).toBe('timeout');
  });
});

describe('greenGate', () => {
  const prints = { 'a.test.js': 'h1', 'b.test.js': 'h2' };

  it('accepts when all tests pass and test files are unchanged', () => {
    expect(greenGate(BASELINE, prints, { ...prints })).toMatchObject({ accepted: true, summary: 'All 2 tests pass' });
  });

  it('rejects tests that ran before and no longer run (or are skipped) as tests-not-run', () => {
    const narrowed = run([pass('a::one')]);
    const decision = rejected(greenGate(narrowed, prints, prints, ['a::one', 'a::new']));
    expect(decision.reason).toBe('tests-not-run');
    expect(decision.subjects).toEqual(['a::new']);
    expect(decision.feedback).toContain('- a::new');
    expect(
      rejected(greenGate(run([pass('a::one'), skip('a::new')]), prints, prints, ['a::one', 'a::new'])).reason,
    ).toBe('tests-not-run');
    expect(greenGate(run([pass('a::one'), pass('a::new')]), prints, prints, ['a::one', 'a::new'])).toMatchObject({
      accepted: true,
    });
  });

  it('rejects tests-failing with the failing tests', () => {
    const decision = rejected(
      greenGate(run([pass('a::one'), fail('a::new', 'assertion', 'expected 4')]), prints, prints),
    );
    expect(decision.reason).toBe('tests-failing');
    expect(decision.subjects).toEqual(['a::new']);
    expect(decision.feedback).toContain('expected 4');
  });

  it('rejects tests-failing on a non-zero exit, collection errors or a timeout even with no failing test', () => {
    expect(rejected(greenGate(run([pass('a::one')], { exitCode: 2 }), prints, prints)).feedback).toContain(
      'exited with code 2',
    );
    expect(
      rejected(greenGate(run([pass('a::one')], { collectionErrors: ['b.py: ImportError'] }), prints, prints)).feedback,
    ).toContain('ImportError');
    expect(rejected(greenGate(run([pass('a::one')], { timedOut: true }), prints, prints)).feedback).toContain(
      'timed out',
    );
  });

  it('rejects test-files-changed naming changed, added and removed files', () => {
    const decision = rejected(greenGate(BASELINE, prints, { 'a.test.js': 'other', 'c.test.js': 'h3' }));
    expect(decision.reason).toBe('test-files-changed');
    expect(decision.subjects).toEqual(['a.test.js', 'c.test.js', 'b.test.js']);
    expect(decision.feedback).toContain('changed: a.test.js');
    expect(decision.feedback).toContain('added: c.test.js');
    expect(decision.feedback).toContain('removed: b.test.js');
  });
});

describe('verifyGate', () => {
  const check = (name: string, ok: boolean): CheckResult => ({
    name,
    command: `npm run ${name}`,
    exitCode: ok ? 0 : 1,
    timedOut: false,
    durationMs: 5,
    output: ok ? '' : `${name}: problem at src/x.ts:3`,
    ok,
  });

  it('accepts passing tests and clean checks', () => {
    expect(verifyGate(BASELINE, [check('lint', true), check('typecheck', true)])).toMatchObject({
      accepted: true,
      summary: 'All 2 tests pass; lint, typecheck clean',
    });
  });

  it('rejects checks-failing with each failing check’s output', () => {
    const decision = rejected(verifyGate(BASELINE, [check('lint', true), check('typecheck', false)]));
    expect(decision.reason).toBe('checks-failing');
    expect(decision.subjects).toEqual(['typecheck']);
    expect(decision.feedback).toContain('typecheck: problem at src/x.ts:3');
  });

  it('rejects tests-failing before looking at checks', () => {
    expect(rejected(verifyGate(run([fail('a::x')]), [check('lint', false)])).reason).toBe('tests-failing');
  });
});
