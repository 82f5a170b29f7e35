import type { FailureKind, TestCaseResult, TestStatus } from '../../core/verification.js';
import { kindFromText, shortMessage, type ParsedTestOutput } from './classify.js';

/*
 * pytest's console output, used when no JUnit XML report was written. Two line shapes carry a
 * test's outcome: the `-rA` short summary (`PASSED tests/test_a.py::test_x`,
 * `FAILED tests/test_a.py::test_y - assert 1 == 2`, `ERROR tests/test_b.py`) and `-v` lines
 * (`tests/test_a.py::test_x PASSED [ 50%]`). An `ERROR` naming a file (no `::`) is a module that
 * failed to collect; its traceback sits in an `ERROR collecting <file>` section.
 * Ids are pytest node ids, the same as the JUnit parser produces with `junit_family=xunit1`.
 */

const SUMMARY = /^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(\S+)(?:\s+-\s+(.*?)|\s+.*?)?\s*$/;
const VERBOSE = /^(\S+::\S.*?)\s+(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)(?:\s+\(.*\))?(?:\s+\[\s*\d+%\])?\s*$/;
const SECTION = /^_{2,} (.+?) _{2,}$/;

/** True when `text` looks like pytest console output. */
export function looksLikePytest(text: string): boolean {
  return /^=+ test session starts =+$/m.test(text) || /^(?:PASSED|FAILED|ERROR) \S+::/m.test(text);
}

/** Parses pytest console output (best with `-rA` or `-v`). */
export function parsePytestText(text: string): ParsedTestOutput {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  const sections = collectSections(lines);
  const byId = new Map<string, TestCaseResult>();
  const collectionErrors: string[] = [];

  for (const line of lines) {
    const summary = SUMMARY.exec(line);
    const verbose = summary === null ? VERBOSE.exec(line) : null;
    const word = summary?.[1] ?? verbose?.[2];
    const nodeId = summary?.[2] ?? verbose?.[1];
    if (word === undefined || nodeId === undefined) continue;
    if (word === 'SKIPPED' && summary !== null) continue; // `SKIPPED [1] file:line: reason` names no test.
    if (word === 'ERROR' && !nodeId.includes('::')) {
      const detail = sections.get(`ERROR collecting ${nodeId}`) ?? summary?.[3] ?? 'collection error';
      const message = shortMessage(detail);
      if (!byId.has(`${nodeId}::(collection)`)) collectionErrors.push(`${nodeId}: ${message}`);
      byId.set(`${nodeId}::(collection)`, {
        id: `${nodeId}::(collection)`,
        name: '(collection)',
        file: nodeId,
        status: 'failed',
        failureKind: 'collection',
        message,
      });
      continue;
    }
    const previous = byId.get(nodeId);
    // The summary line has the message; a verbose line seen earlier must not hide it.
    if (previous !== undefined && previous.status === 'failed' && previous.message !== undefined) continue;
    byId.set(nodeId, toCase(nodeId, word, summary?.[3], sections));
  }
  return { tests: [...byId.values()], collectionErrors };
}

function toCase(
  nodeId: string,
  word: string,
  summaryMessage: string | undefined,
  sections: Map<string, string>,
): TestCaseResult {
  const parts = nodeId.split('::');
  const file = parts[0] ?? null;
  const name = parts.slice(1).join('::');
  // As in pytest's JUnit XML: an expected failure is skipped, an unexpected pass (not strict) passed.
  const status: TestStatus =
    word === 'PASSED' || word === 'XPASS' ? 'passed' : word === 'SKIPPED' || word === 'XFAIL' ? 'skipped' : 'failed';
  if (status !== 'failed') return { id: nodeId, name, file, status };
  // pytest titles a failure section with the test's name without the file (`TestK.test_m`).
  const section = sections.get(parts.slice(1).join('.')) ?? sections.get(`ERROR at setup of ${parts.at(-1) ?? ''}`);
  const text = [summaryMessage, section].filter((part) => part !== undefined).join('\n');
  const fallback: FailureKind = word === 'ERROR' ? 'error' : 'assertion';
  const failureKind = kindFromText(section ?? summaryMessage ?? '', fallback);
  return { id: nodeId, name, file, status, failureKind, message: shortMessage(text || word) };
}

/** `____ title ____` sections of the FAILURES and ERRORS blocks, keyed by title. */
function collectSections(lines: string[]): Map<string, string> {
  const sections = new Map<string, string>();
  let title: string | undefined;
  let body: string[] = [];
  const flush = (): void => {
    if (title !== undefined) sections.set(title, body.join('\n'));
  };
  for (const line of lines) {
    const header = SECTION.exec(line);
    if (header?.[1] !== undefined) {
      flush();
      title = header[1];
      body = [];
    } else if (/^=+ .* =+$/.test(line) || /^-+ generated xml file/.test(line)) {
      flush();
      title = undefined;
    } else if (title !== undefined) {
      body.push(line);
    }
  }
  flush();
  return sections;
}
