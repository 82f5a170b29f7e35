/**
 * The JavaScript/TypeScript reader of the static test review (`test-quality.ts`): the tests of a
 * file, their assertions, its imports and mocks, read from oxc's ESTree program. oxc parses
 * natively; tree-sitter, which this reader replaced, made every tasks run compile its JavaScript
 * and TypeScript grammars' WebAssembly in the coordinator (V8 background threads, ~120 ms) and
 * walk its trees through wasm calls after every RED, the larger part of the coordinator's own CPU
 * that the review cost (issue 14, bench/workers.ts).
 *
 * The rules read the source the way the tree-sitter reader did, which `test/code/test-quality*`
 * pins: a callee is its source text without whitespace (`test.each([...])` is `test` with a
 * modifier), a tagged template is a call with no arguments, a computed member (`a['b']`) ends a
 * matcher chain, `undefined` and `1n` are literals, generator functions are neither test bodies
 * nor helpers. Two differences, both ways a model could hide a test from the review: a comment is
 * not an argument (a test whose title followed a comment was not read), and a title is the string's
 * value (tree-sitter's reader kept only its text up to the first escape, so a new test
 * `'it\'s b'` passed for an older `'it\'s a'`).
 */
import type { Node, Program } from 'oxc-parser';
import { RatchetError } from '../core/errors.js';
import { LineTable } from './index/line-table.js';
import { loadOxcReader, type OxcReader } from './oxc-program.js';
import type { TestCaseFacts, TestFileFacts } from './test-quality.js';
import type { LanguageId } from './tree-sitter.js';

/** A call as the rules read it: `f(...)`, a tagged template, or `import(...)` (no callee). */
interface Call {
  start: number;
  end: number;
  callee: Node | undefined;
  args: Node[];
}

const JS_TEST_FUNCTIONS = new Set(['test', 'it']);
const JS_SKIPPED = new Set(['skip', 'todo']);
/** Matchers comparing the subject with their argument: constant when both sides are. */
const JS_COMPARING_MATCHERS = new Set(['toBe', 'toEqual', 'toStrictEqual', 'toMatchObject']);
/** Matchers with no argument that hold for any literal of the right kind. */
const JS_SELF_MATCHERS = new Set(['toBeTruthy', 'toBeFalsy', 'toBeDefined', 'toBeUndefined', 'toBeNull']);
const JS_MOCKERS = /^(vi|jest)\.(mock|doMock|unstable_mockModule)$|^mock\.module$|^td\.replace(Esm)?$/;
/** Assertion modules: what a test imports from them by name asserts when called. */
const JS_ASSERTION_MODULES = /^((node:)?assert(\/strict)?|chai|expect|power-assert)$/;

/** The nodes of a program the reader looks at, each list in source order (parents before children). */
interface Collected {
  calls: Call[];
  /** Import and export declarations with a source. */
  modules: Array<{ source: string; node: Node }>;
  /** Function declarations and variable declarators that define a named non-generator function. */
  functions: Array<{ name: string; body: Node }>;
}

/** Parses and reads one test file; throws (an internal failure, for the review's breaker) when it does not parse. */
export async function readJavaScriptTests(path: string, text: string, language: LanguageId): Promise<TestFileFacts> {
  const oxc = await loadOxcReader().catch((error: unknown) => {
    throw new RatchetError('internal', `The test review could not load oxc-parser: ${String(error)}`);
  });
  const program = oxc.parse(path, text, language);
  if (program === undefined)
    throw new RatchetError('internal', `The test review could not parse ${path}.`, {
      details: { reason: 'unparsable' },
    });
  const source = (node: Node): string => text.slice(node.start, node.end);
  const calleeText = (call: Call): string => (call.callee === undefined ? 'import' : source(call.callee));
  const calleeName = (call: Call): string => calleeText(call).replace(/\s+/g, '');
  const { calls, modules, functions } = collect(oxc, program);
  const lines = new LineTable(text);
  const lineOf = (offset: number): number => lines.line(offset);

  // `import { strictEqual } from 'node:assert'`: a call of `strictEqual` asserts.
  const imported = new Set<string>();
  for (const { source: from, node } of modules) {
    if (node.type !== 'ImportDeclaration' || !JS_ASSERTION_MODULES.test(from)) continue;
    for (const specifier of node.specifiers) imported.add(specifier.local.name);
  }
  const isAssertion = (call: Call): boolean =>
    // expect(...) (any chain), assert(...), assert.x(...), t.assert.x(...), should: chai and node.
    call.callee !== undefined &&
    /^(expect|assert)(\.|$)|\.assert(\.|$)|\.should(\.|$)|^(t|context)\.(is|not|deepEqual|true|false|throws|throwsAsync|snapshot|like|regex)$/.test(
      calleeName(call),
    );
  const asserts = (call: Call): boolean => isAssertion(call) || imported.has(calleeText(call).split('.')[0] ?? '');
  // Functions of the file (not tests) that assert: calling one asserts.
  const helpers = new Set(
    functions.filter(({ body }) => calls.some((call) => asserts(call) && within(call, body))).map(({ name }) => name),
  );

  const isConstant = (call: Call): boolean => {
    const { callee, args } = call;
    if (callee === undefined) return false;
    // expect(a).toBe(b) and friends: the call is the matcher, its chain root is expect(a).
    if (isStaticMember(callee)) {
      const matcher = source(callee.property);
      const root = chainRoot(call);
      if (root !== call && /^expect(\.soft)?$/.test(calleeText(root))) {
        const subject = root.args[0];
        if (JS_COMPARING_MATCHERS.has(matcher)) return sameOrLiteral(subject, args[0], source);
        if (JS_SELF_MATCHERS.has(matcher)) return isLiteral(subject);
        return false;
      }
    }
    const name = calleeName(call);
    if (/^(t\.)?assert(\.(ok|equal|strictEqual|deepEqual|deepStrictEqual|notEqual))?$/.test(name)) {
      if (args.length === 1 || /^(t\.)?assert(\.ok)?$/.test(name)) return isLiteral(args[0]);
      return !name.endsWith('notEqual') && sameOrLiteral(args[0], args[1], source);
    }
    return false;
  };

  const tests: TestCaseFacts[] = [];
  const mocks: TestFileFacts['mocks'] = [];
  const imports: string[] = [];
  for (const call of calls) {
    const name = calleeName(call);
    if (JS_MOCKERS.test(name)) {
      const target = stringValue(call.args[0], source);
      if (target !== undefined)
        mocks.push({ target, line: lineOf(call.start), text: text.slice(call.start, call.end) });
    }
    if (name === 'require' || call.callee === undefined) {
      const target = stringValue(call.args[0], source);
      if (target !== undefined) imports.push(target);
    }
    const [base, modifier] = name.split('.');
    if (base === undefined || !JS_TEST_FUNCTIONS.has(base) || (modifier !== undefined && JS_SKIPPED.has(modifier)))
      continue;
    const title = stringValue(call.args[0], source);
    const body = call.args.findLast(isFunctionExpression);
    if (title === undefined || body === undefined) continue;
    const inside = calls.filter((node) => within(node, body));
    tests.push({
      name: title,
      line: lineOf(call.start),
      assertions: inside.filter((node) => asserts(node) || helpers.has(calleeText(node))).length,
      constant: inside
        .filter(isConstant)
        .map((node) => ({ line: lineOf(node.start), text: text.slice(node.start, node.end) })),
    });
  }
  imports.push(...modules.map((module) => module.source));
  return { python: false, tests, imports, mocks };
}

/** One walk of the program, in source order. */
function collect(oxc: OxcReader, program: Program): Collected {
  const collected: Collected = { calls: [], modules: [], functions: [] };
  oxc.walk(program, (node) => {
    switch (node.type) {
      case 'CallExpression':
        collected.calls.push({ start: node.start, end: node.end, callee: node.callee, args: node.arguments });
        break;
      case 'TaggedTemplateExpression':
        collected.calls.push({ start: node.start, end: node.end, callee: node.tag, args: [] });
        break;
      case 'ImportExpression':
      // `typeof import('./x')` in a type: tree-sitter's grammar reads an import call there too.
      case 'TSImportType':
        collected.calls.push({ start: node.start, end: node.end, callee: undefined, args: [node.source] });
        break;
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
        collected.modules.push({ source: node.source.value, node });
        break;
      case 'ExportNamedDeclaration':
        if (node.source !== null) collected.modules.push({ source: node.source.value, node });
        break;
      // TypeScript's CommonJS import: `import add = require('./add')`.
      case 'TSImportEqualsDeclaration':
        if (node.moduleReference.type === 'TSExternalModuleReference')
          collected.modules.push({ source: node.moduleReference.expression.value, node });
        break;
      case 'FunctionDeclaration':
        if (node.id !== null && node.body !== null && !node.generator)
          collected.functions.push({ name: node.id.name, body: node });
        break;
      case 'VariableDeclarator':
        if (node.init !== null && isFunctionExpression(node.init) && node.id.type === 'Identifier')
          collected.functions.push({ name: node.id.name, body: node.init });
        break;
      default:
        break;
    }
  });
  return collected;
}

/** A test body or helper: an arrow function or a function expression (not a generator). */
function isFunctionExpression(node: Node): boolean {
  return node.type === 'ArrowFunctionExpression' || (node.type === 'FunctionExpression' && !node.generator);
}

/** `a.b` or `a.#b`; a computed member `a['b']` is not one (tree-sitter's subscript expression). */
function isStaticMember(node: Node): node is Extract<Node, { type: 'MemberExpression'; computed: false }> {
  return node.type === 'MemberExpression' && !node.computed;
}

/** The root call of a chain: `expect(x)` of `expect(x).not.toBe(y)`. */
function chainRoot(call: Call): Call {
  let current = call;
  for (;;) {
    const callee = current.callee;
    let inner = callee !== undefined && isStaticMember(callee) ? callee.object : undefined;
    while (inner !== undefined && isStaticMember(inner)) inner = inner.object;
    const next = inner === undefined ? undefined : asCall(inner);
    if (next === undefined) return current;
    current = next;
  }
}

function asCall(node: Node): Call | undefined {
  if (node.type === 'CallExpression')
    return { start: node.start, end: node.end, callee: node.callee, args: node.arguments };
  if (node.type === 'TaggedTemplateExpression') return { start: node.start, end: node.end, callee: node.tag, args: [] };
  if (node.type === 'ImportExpression') return { start: node.start, end: node.end, callee: undefined, args: [] };
  return undefined;
}

function within(node: { start: number; end: number }, container: { start: number; end: number }): boolean {
  return node.start >= container.start && node.end <= container.end;
}

function isLiteral(node: Node | undefined): boolean {
  if (node === undefined) return false;
  if (node.type === 'Literal') return true;
  if (node.type === 'Identifier') return node.name === 'undefined';
  if (node.type === 'TemplateLiteral') return node.expressions.length === 0;
  if (node.type === 'UnaryExpression') return isLiteral(node.argument);
  return false;
}

function sameOrLiteral(left: Node | undefined, right: Node | undefined, source: (node: Node) => string): boolean {
  if (left === undefined || right === undefined) return false;
  return (
    (isLiteral(left) && isLiteral(right)) || source(left).replace(/\s+/g, '') === source(right).replace(/\s+/g, '')
  );
}

/** A string literal's value, or a template's raw text when it has no substitutions. */
function stringValue(node: Node | undefined, source: (node: Node) => string): string | undefined {
  if (node === undefined) return undefined;
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return source(node).slice(1, -1);
  return undefined;
}
