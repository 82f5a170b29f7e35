/**
 * Ratchet's node:test reporter, a module the user's `node --test` loads (through NODE_OPTIONS,
 * see `reporters.ts`) from the run's report directory.
 *
 * Why not node's own `junit` reporter: on Node 22 it writes no `file` attribute (Node 24 does),
 * so every test id would lose its file (`test::adds` instead of `test/a.test.js::adds`), a load
 * failure could not be told from a failing test, and two files' tests of the same name would
 * collide. The reporter events carry `data.file` on every version Ratchet supports (>= 22), so
 * this module writes the document Node 24's `junit` writes from them, whatever Node runs the
 * tests: `<testsuite>` for a test with subtests, `<testcase name classname time file>` for the
 * others, `<failure type message>` holding the inspected error, `<skipped>` for skip and todo,
 * escaped as node escapes. The JUnit parser reads it unchanged.
 *
 * It relies only on the documented order of `test:pass` / `test:fail`: in definition order, a
 * test's subtests before the test itself. Plain JavaScript for every supported Node: no
 * TypeScript, no dependency beyond `node:util`.
 */
export const NODE_TEST_REPORTER_SOURCE = `// Written by Ratchet for one test run: node:test results as JUnit XML, each test with its file.
import { inspect } from 'node:util';

export default async function* ratchetJunitReporter(source) {
  // pending[n]: finished tests at nesting n whose parent has not finished yet.
  const pending = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const nesting = event.data.nesting;
    const children = pending[nesting + 1] ?? [];
    pending.length = nesting + 1;
    (pending[nesting] ??= []).push({ event, children });
  }
  yield '<?xml version="1.0" encoding="utf-8"?>\\n<testsuites>\\n';
  for (const node of pending[0] ?? []) yield toXml(node, 1);
  yield '</testsuites>\\n';
}

function toXml({ event, children }, depth) {
  const data = event.data;
  const indent = '\\t'.repeat(depth);
  const time = (Number(data.details?.duration_ms ?? 0) / 1000).toFixed(6);
  if (children.length > 0) {
    const failures = children.filter((child) => child.event.type === 'test:fail').length;
    const skipped = children.filter((child) => child.event.data.skip || child.event.data.todo).length;
    const attributes = { name: data.name, time, tests: children.length, failures, skipped };
    const body = children.map((child) => toXml(child, depth + 1)).join('');
    return indent + '<testsuite ' + attributesOf(attributes) + '>\\n' + body + indent + '</testsuite>\\n';
  }
  const attributes = { name: data.name, time, classname: data.classname ?? 'test' };
  if (data.file) attributes.file = data.file;
  const inner = [];
  if (data.skip) inner.push(indent + '\\t<skipped ' + attributesOf({ type: 'skipped', message: data.skip }) + '/>\\n');
  if (data.todo) inner.push(indent + '\\t<skipped ' + attributesOf({ type: 'todo', message: data.todo }) + '/>\\n');
  if (event.type === 'test:fail') {
    const error = data.details?.error;
    const message = String(error?.message ?? '').trim();
    attributes.failure = message;
    const type = error?.failureType || error?.code;
    inner.push(
      indent + '\\t<failure ' + attributesOf({ type, message }) + '>\\n' +
        escapeText(inspectError(error)) + '\\n' + indent + '\\t</failure>\\n',
    );
  }
  const open = indent + '<testcase ' + attributesOf(attributes);
  return inner.length === 0 ? open + '/>\\n' : open + '>\\n' + inner.join('') + indent + '</testcase>\\n';
}

function inspectError(error) {
  const options = { colors: false, breakLength: Infinity };
  try {
    return inspect(error, options);
  } catch {
    return inspect(error, { ...options, customInspect: false });
  }
}

function attributesOf(attributes) {
  return Object.entries(attributes)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => key + '="' + escapeText(String(value).replace(/\\n/g, '')).replace(/"/g, '&quot;') + '"')
    .join(' ');
}

function escapeText(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
`;
