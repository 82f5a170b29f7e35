import { z } from 'zod';
import type { FailureKind, TestCaseResult } from '../../core/verification.js';
import { shortMessage, testId, type ParsedTestOutput } from './classify.js';

/*
 * `go test -json` (test2json) events, one JSON object per line. Go has no assertion type:
 * `t.Error`/`t.Fatal` is how a Go test asserts, so a failure is 'assertion' unless the test
 * panicked ('error') or hit the `-timeout` ('timeout'). A test that ran but never finished
 * (the `-timeout` panic kills the binary under it) counts as failed.
 *
 * Build failures are collection errors. Up to Go 1.23 they arrive as plain text
 * (`# pkg` + compiler lines on stderr, `FAIL\tpkg [build failed]` on stdout); Go 1.24+
 * emits `build-output`/`build-fail` events and sets `FailedBuild` on the package's `fail`.
 * Parent tests whose subtests reported are summaries and are left out; ids are
 * `<package>::<Test/Sub>`.
 *
 * An empty suite (`go test ./...` where no package has a test file, as in an exercise before its
 * first test) is readable only from the go command's own events: every package ends in a
 * package-level `skip` (`?   pkg [no test files]`). The test binary cannot emit events (test2json
 * wraps everything it writes, stderr included, as `output`), so code under test that prints
 * `[no test files]` and exits 0 ends its package in `pass` with no test: not an empty suite.
 */

const eventSchema = z.looseObject({
  Action: z.string(),
  Package: z.string().optional(),
  ImportPath: z.string().optional(),
  Test: z.string().optional(),
  Output: z.string().optional(),
  Elapsed: z.number().optional(),
  FailedBuild: z.string().optional(),
});

interface TestState {
  pkg: string;
  test: string;
  output: string[];
  started?: boolean;
  action?: string;
  /** Set for a test that never finished: how its binary died. */
  unfinished?: FailureKind;
  elapsed?: number;
}

/** Parses `go test -json` output (stdout, optionally followed by stderr). */
export function parseGoJson(text: string): ParsedTestOutput & { readable: string } {
  const tests = new Map<string, TestState>();
  const buildOutput = new Map<string, string[]>();
  const packageOutput = new Map<string, string[]>();
  const failedPackages = new Set<string>();
  /** How each package ended (its package-level pass, fail or skip). */
  const packageEnds = new Map<string, string>();
  const readable: string[] = [];
  const plain: string[] = [];

  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) {
      if (line.trim() !== '') plain.push(line);
      readable.push(line);
      continue;
    }
    const parsed = eventSchema.safeParse(safeJson(line));
    if (!parsed.success) continue;
    const event = parsed.data;
    if (event.Action === 'build-output' && event.ImportPath !== undefined) {
      append(buildOutput, event.ImportPath, event.Output ?? '');
      readable.push((event.Output ?? '').replace(/\n$/, ''));
      continue;
    }
    const pkg = event.Package ?? event.ImportPath ?? '';
    if (event.Action === 'output') readable.push((event.Output ?? '').replace(/\n$/, ''));
    if (event.Test === undefined) {
      if (event.Action === 'output') append(packageOutput, pkg, event.Output ?? '');
      if (event.Action === 'pass' || event.Action === 'fail' || event.Action === 'skip')
        packageEnds.set(pkg, event.Action);
      if (event.Action === 'fail') {
        failedPackages.add(pkg);
        if (event.FailedBuild !== undefined) append(buildOutput, event.FailedBuild, '');
      }
      continue;
    }
    const key = testId(pkg, event.Test);
    const state = tests.get(key) ?? { pkg, test: event.Test, output: [] };
    tests.set(key, state);
    if (event.Action === 'run') state.started = true;
    if (event.Action === 'output') state.output.push(event.Output ?? '');
    if (event.Action === 'pass' || event.Action === 'fail' || event.Action === 'skip') {
      state.action = event.Action;
      if (event.Elapsed !== undefined) state.elapsed = event.Elapsed;
    }
  }

  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  // A test that started but never finished: the binary died under it, most often at the
  // `-timeout` (Go 1.19's test2json reports no `fail` for it; the panic is in its output).
  const timedOut = new Set<string>();
  for (const state of tests.values()) {
    if (state.output.some((line) => line.startsWith('panic: test timed out'))) timedOut.add(state.pkg);
  }
  for (const [pkg, output] of packageOutput) {
    if (output.some((line) => line.startsWith('panic: test timed out'))) timedOut.add(pkg);
  }
  for (const state of tests.values()) {
    if (state.action !== undefined || state.started !== true) continue;
    state.action = 'fail';
    state.unfinished = timedOut.has(state.pkg) ? 'timeout' : 'error';
  }
  const names = [...tests.values()].filter((state) => state.action !== undefined);
  for (const state of names) {
    const hasChildren = names.some((other) => other.pkg === state.pkg && other.test.startsWith(`${state.test}/`));
    if (!hasChildren) result.tests.push(toCase(state));
  }
  addBuildFailures(result, plain, buildOutput);
  // A package that failed without a failing test or a build error: TestMain, init, a panic
  // outside any test.
  for (const pkg of failedPackages) {
    const anyFailed = result.tests.some((test) => test.status === 'failed' && test.id.startsWith(`${pkg}::`));
    const built = result.collectionErrors.some((error) => error.startsWith(`${pkg}:`) || error.startsWith(`${pkg} [`));
    if (!anyFailed && !built)
      result.collectionErrors.push(`${pkg}: ${shortMessage((packageOutput.get(pkg) ?? []).join(''))}`);
  }
  const emptySuite =
    tests.size === 0 &&
    result.collectionErrors.length === 0 &&
    packageEnds.size > 0 &&
    [...packageEnds.values()].every((action) => action === 'skip');
  return { ...result, ...(emptySuite ? { emptySuite } : {}), readable: readable.join('\n') };
}

function toCase(state: TestState): TestCaseResult {
  const base = {
    id: testId(state.pkg, state.test),
    name: state.test,
    file: null,
    ...(state.elapsed === undefined ? {} : { durationMs: Math.round(state.elapsed * 1000) }),
  };
  if (state.action === 'pass') return { ...base, status: 'passed' };
  if (state.action === 'skip') return { ...base, status: 'skipped' };
  const output = state.output.filter((line) => !/^(?:=== (?:RUN|PAUSE|CONT)|--- FAIL)/.test(line)).join('');
  const kind: FailureKind = /panic: test timed out after/.test(output)
    ? 'timeout'
    : state.unfinished !== undefined
      ? state.unfinished
      : /^\s*panic: /m.test(output)
        ? 'error'
        : 'assertion';
  return { ...base, status: 'failed', failureKind: kind, message: shortMessage(output) };
}

function addBuildFailures(result: ParsedTestOutput, plain: string[], buildOutput: Map<string, string[]>): void {
  for (const [pkg, output] of buildOutput) {
    result.collectionErrors.push(`${pkg}: build failed\n${shortMessage(output.join(''))}`.trim());
  }
  for (const line of plain) {
    const match = /^FAIL\s+(\S+)\s+\[(build failed|setup failed)\]/.exec(line);
    if (match?.[1] === undefined || buildOutput.has(match[1])) continue;
    // Compiler messages for this package follow its `# pkg` header (on stderr).
    const header = plain.findIndex((other) => other.startsWith(`# ${match[1]}`));
    const details: string[] = [];
    for (let index = header + 1; header >= 0 && index < plain.length; index += 1) {
      const next = plain[index] ?? '';
      if (next.startsWith('# ') || next.startsWith('FAIL') || next.startsWith('ok ')) break;
      details.push(next);
    }
    result.collectionErrors.push(`${match[1]}: ${match[2]}\n${shortMessage(details.join('\n'))}`.trim());
  }
}

function append(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}
