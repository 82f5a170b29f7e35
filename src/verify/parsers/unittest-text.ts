import type { FailureKind, TestCaseResult, TestStatus } from '../../core/verification.js';
import { kindFromText, shortMessage, type ParsedTestOutput } from './classify.js';

/*
 * `python -m unittest -v` output (written to stderr). Result lines look like
 * `test_x (pkg.mod.Class.test_x) ... ok` (Python >= 3.11) or `test_x (pkg.mod.Class) ... ok`
 * (older); a docstring may sit on its own line between the name and ` ... ok`; a failing
 * subtest adds ` (i=1)`. Detail blocks follow, headed `FAIL: ...` / `ERROR: ...` between
 * `=====` rules. A module that failed to import shows up as the test
 * `unittest.loader._FailedTest.<module>` with `ImportError: Failed to import test module`;
 * in a package the module is dotted (`tests.test_new (unittest.loader._FailedTest.tests.test_new)`).
 * Ids are `<module.Class>::<method>`; subtests fold into their method.
 */

// The name is a method, or a dotted module for the loader's `_FailedTest` of an import error.
const HEADER = /^\s*(\w[\w.]*) \(([\w.]+)\)(?: \((.*)\))?(?:\s*$|\s+\.\.\.)/;
const OUTCOME = /\.\.\.\s*(ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)\s*$/;
const DETAIL = /^(FAIL|ERROR): (\w[\w.]*) \(([\w.]+)\)/;

interface Key {
  scope: string;
  method: string;
}

/** True when `text` looks like verbose unittest output. */
export function looksLikeUnittest(text: string): boolean {
  return /^Ran \d+ tests? in /m.test(text) || /^\w[\w.]* \([\w.]+\) \.\.\. /m.test(text);
}

/** Parses `python -m unittest -v` output. */
export function parseUnittestText(text: string): ParsedTestOutput {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  const details = collectDetails(lines);
  const byId = new Map<string, TestCaseResult>();
  const collectionErrors: string[] = [];
  let pending: Key | undefined;

  for (const line of lines) {
    if (/^[=-]{20,}$/.test(line)) break; // The detail blocks start; every outcome has been seen.
    const header = HEADER.exec(line);
    if (header?.[1] !== undefined && header[2] !== undefined) pending = keyOf(header[1], header[2]);
    const outcome = OUTCOME.exec(line);
    if (outcome?.[1] === undefined || pending === undefined) continue;
    const key = pending;
    pending = undefined;
    const id = `${key.scope}::${key.method}`;
    const word = outcome[1];
    if (key.scope.startsWith('unittest.loader._Failed')) {
      const message = shortMessage(details.get(id) ?? `Failed to import test module: ${key.method}`);
      collectionErrors.push(`${key.method}: ${message}`);
      byId.set(id, {
        id: `${key.method}::(collection)`,
        name: '(collection)',
        file: null,
        status: 'failed',
        failureKind: 'collection',
        message,
      });
      continue;
    }
    const previous = byId.get(id);
    if (previous?.status === 'failed') continue; // A failed subtest fails its method.
    byId.set(id, toCase(id, key, word, details.get(id)));
  }
  return { tests: [...byId.values()], collectionErrors };
}

function keyOf(method: string, qualified: string): Key {
  // 3.11+: `(mod.Class.method)`; older: `(mod.Class)`.
  const scope = qualified.endsWith(`.${method}`) ? qualified.slice(0, -(method.length + 1)) : qualified;
  return { scope, method };
}

function toCase(id: string, key: Key, word: string, detail: string | undefined): TestCaseResult {
  const status: TestStatus =
    word === 'ok' || word === 'expected failure' ? 'passed' : word.startsWith('skipped') ? 'skipped' : 'failed';
  const base = { id, name: key.method, file: null };
  if (status !== 'failed') return { ...base, status };
  const fallback: FailureKind = word === 'ERROR' ? 'error' : 'assertion';
  const failureKind = word === 'unexpected success' ? 'assertion' : kindFromText(lastException(detail) ?? '', fallback);
  return { ...base, status, failureKind, message: shortMessage(detail ?? word) };
}

/** The final `Name: message` line of a traceback, which names the exception raised. */
function lastException(detail: string | undefined): string | undefined {
  if (detail === undefined) return undefined;
  const lines = detail.split('\n').filter((line) => /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b/.test(line));
  return lines.at(-1);
}

/** `FAIL: name (scope)` / `ERROR: ...` blocks, keyed by test id; subtest blocks are merged. */
function collectDetails(lines: string[]): Map<string, string> {
  const details = new Map<string, string>();
  let id: string | undefined;
  let body: string[] = [];
  const flush = (): void => {
    if (id === undefined) return;
    const previous = details.get(id);
    details.set(id, previous === undefined ? body.join('\n') : `${previous}\n${body.join('\n')}`);
  };
  for (const line of lines) {
    const header = DETAIL.exec(line);
    if (header?.[2] !== undefined && header[3] !== undefined) {
      flush();
      const key = keyOf(header[2], header[3]);
      id = `${key.scope}::${key.method}`;
      body = [];
    } else if (/^={20,}$/.test(line) || /^Ran \d+ tests? in /.test(line)) {
      flush();
      id = undefined;
    } else if (id !== undefined && !/^-{20,}$/.test(line)) {
      body.push(line);
    }
  }
  flush();
  return details;
}
