/**
 * The static review of test quality after RED (seed 000's `ast_checker` test detectors and its
 * "RED -> Static Review -> GREEN" pipeline). A test that RED's gate accepted fails on an
 * assertion, but that proves little: the assertion may not be reached by the new behaviour, may
 * hold whatever the code does, or the unit under test may be replaced by a mock. These checks are
 * deterministic (principle 1: no model judges a stage) and read one test file:
 *
 * - `no-assertion`: a new test whose body asserts nothing (no `expect`/`assert` call, no Python
 *   `assert`, `pytest.raises` or `self.assert*`, no call of a helper of the file that asserts);
 * - `constant-assertion`: an assertion that cannot fail: `expect(1).toBe(1)`, `expect(x).toBe(x)`,
 *   `assert.ok(true)`, `assert True`, `assert x == x`, `self.assertEqual(a, a)`;
 * - `mocks-unit-under-test`: the file mocks the implementation file it tests (`vi.mock`,
 *   `jest.mock`, `mock.module` of it; `patch("<its module>.…")`);
 * - `unit-not-used`: the file does not import the implementation file at all, so its tests test
 *   nothing of the task.
 *
 * Per-test findings concern the tests that are new since `before` (tests are told apart by their
 * names); a user's older tests are not RED's to fix. JavaScript and TypeScript are read with oxc
 * (`test-quality-javascript.ts`), Python with tree-sitter; other languages are not reviewed
 * (`undefined`). A file that does not parse is an internal failure of the review (it throws): the
 * circuit breaker of the caller counts those.
 */
import { isBuiltin } from 'node:module';
import { basename, dirname, extname, join, normalize } from 'node:path';
import type { Node } from 'web-tree-sitter';
import { RatchetError } from '../core/errors.js';
import { readJavaScriptTests } from './test-quality-javascript.js';
import { languageIdForFile, parseFile } from './tree-sitter.js';

type TestQualityRule = 'no-assertion' | 'constant-assertion' | 'mocks-unit-under-test' | 'unit-not-used';

export interface TestQualityFinding {
  rule: TestQualityRule;
  /** The test's name, for per-test findings. */
  test: string | null;
  /** 1-based line of the finding. */
  line: number;
  /** One sentence saying what is wrong and what a good test does instead. */
  message: string;
}

export interface TestQualityInput {
  /** The test file, relative to the repository root. */
  testFile: string;
  /** Its text after RED. */
  text: string;
  /** Its text before RED (null: a new file): only tests that are new are judged one by one. */
  before: string | null;
  /** The implementation file the test is for, relative to the repository root. */
  implFile: string;
}

/** Reviews one test file; undefined when its language is not one the review reads. */
export async function reviewTestQuality(input: TestQualityInput): Promise<TestQualityFinding[] | undefined> {
  const language = languageIdForFile(input.testFile);
  if (language === undefined || (language !== 'python' && !isJavaScriptLike(language))) return undefined;
  const after = await readTests(input.testFile, input.text);
  const before =
    input.before === null ? undefined : await readTests(input.testFile, input.before).catch(() => undefined);
  const known = new Set(before?.tests.map((test) => test.name) ?? []);
  const findings: TestQualityFinding[] = [];
  for (const test of after.tests) {
    if (known.has(test.name)) continue;
    if (test.assertions === 0)
      findings.push({
        rule: 'no-assertion',
        test: test.name,
        line: test.line,
        message: `The test "${test.name}" asserts nothing: it passes whatever the code does. Assert on what ${input.implFile} returns or does.`,
      });
    for (const constant of test.constant)
      findings.push({
        rule: 'constant-assertion',
        test: test.name,
        line: constant.line,
        message: `The assertion \`${oneLine(constant.text)}\` in "${test.name}" cannot fail: it compares values that do not come from ${input.implFile}. Assert on the result of the code under test.`,
      });
  }
  const mocked = after.mocks.find((mock) => mockTargetsImpl(mock.target, input, after));
  if (mocked !== undefined)
    findings.push({
      rule: 'mocks-unit-under-test',
      test: null,
      line: mocked.line,
      message: `${input.testFile} mocks ${input.implFile}, the unit it tests (\`${oneLine(mocked.text)}\`): the test would check the mock, not the code. Mock only its collaborators.`,
    });
  if (
    after.tests.length > 0 &&
    !after.imports.some((specifier) => importsImpl(specifier, input.testFile, input.implFile, after.python))
  )
    findings.push({
      rule: 'unit-not-used',
      test: null,
      line: 1,
      message: `${input.testFile} does not import ${input.implFile}: its tests test nothing of the implementation. Import what the task builds from ${input.implFile} and test it.`,
    });
  return findings;
}

function isJavaScriptLike(language: string): boolean {
  return language === 'javascript' || language === 'typescript' || language === 'tsx';
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** What the rules read of one test file, whatever its language (see the readers). */
export interface TestCaseFacts {
  name: string;
  line: number;
  assertions: number;
  constant: Array<{ line: number; text: string }>;
}

export interface TestFileFacts {
  python: boolean;
  tests: TestCaseFacts[];
  /** Import specifiers: relative paths or package names (JS), dotted modules (Python). */
  imports: string[];
  mocks: Array<{ target: string; line: number; text: string }>;
}

async function readTests(path: string, text: string): Promise<TestFileFacts> {
  const language = languageIdForFile(path);
  if (language !== undefined && isJavaScriptLike(language)) return readJavaScriptTests(path, text, language);
  const parsed = await parseFile(path, text);
  if (parsed === undefined) throw new RatchetError('internal', `No parser for ${path}.`);
  using file = parsed;
  if (file.hasErrors)
    throw new RatchetError('internal', `The test review could not parse ${path}.`, {
      details: { reason: 'unparsable' },
    });
  return readPython(file.tree.rootNode);
}

// Python ----------------------------------------------------------------------------------------

const PY_LITERALS = new Set(['integer', 'float', 'string', 'true', 'false', 'none', 'concatenated_string']);

function readPython(root: Node): TestFileFacts {
  const functions = root.descendantsOfType('function_definition').filter((node) => node !== null);
  const helpers = new Set(
    functions
      .filter((fn) => !(fn.childForFieldName('name')?.text ?? '').startsWith('test'))
      .filter((fn) => pythonAssertions(fn, new Set()).length > 0)
      .map((fn) => fn.childForFieldName('name')?.text ?? ''),
  );
  const tests: TestCaseFacts[] = [];
  for (const fn of functions) {
    const name = fn.childForFieldName('name')?.text ?? '';
    if (!name.startsWith('test')) continue;
    const owner = fn.parent?.parent;
    const className = owner?.type === 'class_definition' ? owner.childForFieldName('name')?.text : undefined;
    tests.push({
      name: className === undefined ? name : `${className}.${name}`,
      line: fn.startPosition.row + 1,
      assertions: pythonAssertions(fn, helpers).length,
      constant: [
        ...fn.descendantsOfType('assert_statement').filter((node) => node !== null && isConstantPythonAssert(node)),
        ...fn.descendantsOfType('call').filter((node) => node !== null && isConstantUnittestAssert(node)),
      ].flatMap((node) => (node === null ? [] : [{ line: node.startPosition.row + 1, text: node.text }])),
    });
  }
  const imports: string[] = [];
  for (const statement of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    if (statement === null) continue;
    const module = statement.childForFieldName('module_name')?.text;
    const names = statement.childrenForFieldName('name').flatMap((node) => {
      const dotted = node?.type === 'aliased_import' ? node.childForFieldName('name') : node;
      return dotted === null || dotted === undefined ? [] : [dotted.text];
    });
    if (module === undefined) imports.push(...names);
    else imports.push(module, ...names.map((name) => `${module}.${name}`));
  }
  const mocks: TestFileFacts['mocks'] = [];
  for (const call of root.descendantsOfType('call')) {
    if (call === null) continue;
    const callee = call.childForFieldName('function')?.text ?? '';
    if (!/(^|\.)patch$/.test(callee)) continue;
    const first = call.childForFieldName('arguments')?.namedChildren[0];
    const target = first?.type === 'string' ? pythonString(first) : undefined;
    if (target !== undefined) mocks.push({ target, line: call.startPosition.row + 1, text: call.text });
  }
  // `@patch("pkg.mod.f")` decorators are calls too; `sys.modules["pkg.mod"] = ...` replaces a module.
  for (const assignment of root.descendantsOfType('assignment')) {
    const left = assignment?.childForFieldName('left');
    if (left?.type !== 'subscript' || left.childForFieldName('value')?.text !== 'sys.modules') continue;
    const key = left.childForFieldName('subscript');
    const target = key?.type === 'string' ? pythonString(key) : undefined;
    if (target !== undefined && assignment !== null)
      mocks.push({ target: `${target}.`, line: assignment.startPosition.row + 1, text: assignment.text });
  }
  return { python: true, tests, imports, mocks };
}

function pythonAssertions(fn: Node, helpers: ReadonlySet<string>): Node[] {
  const asserts = fn.descendantsOfType('assert_statement').filter((node) => node !== null);
  const calls = fn.descendantsOfType('call').filter((node) => {
    if (node === null) return false;
    const callee = node.childForFieldName('function')?.text ?? '';
    return /(^|\.)(assert\w*|raises|fail)$/.test(callee) || helpers.has(callee);
  });
  // `with pytest.raises(...)` is a call inside a with statement: counted above.
  return [...asserts, ...calls].filter((node) => node !== null);
}

function isPythonLiteral(node: Node | null | undefined): boolean {
  if (node === null || node === undefined) return false;
  if (node.type === 'unary_operator') return isPythonLiteral(node.namedChildren[0]);
  if (node.type === 'string') return !node.namedChildren.some((child) => child?.type === 'interpolation');
  return PY_LITERALS.has(node.type);
}

function samePython(left: Node | null | undefined, right: Node | null | undefined): boolean {
  if (!left || !right) return false;
  return (
    (isPythonLiteral(left) && isPythonLiteral(right)) ||
    left.text.replace(/\s+/g, '') === right.text.replace(/\s+/g, '')
  );
}

function isConstantPythonAssert(statement: Node): boolean {
  const test = statement.namedChildren[0];
  if (test === null || test === undefined) return false;
  // `assert True`, `assert 1`, `assert "x"` hold; `assert False`/`0`/`None` always fail: not constant-true.
  if (isPythonLiteral(test)) return !['false', 'none'].includes(test.type) && test.text !== '0' && test.text !== '""';
  if (test.type !== 'comparison_operator') return false;
  const operands = test.namedChildren.filter((node) => node !== null);
  const operators = test.children.filter((node) => node !== null && !node.isNamed).map((node) => node?.text);
  if (operands.length !== 2 || operators.length !== 1) return false;
  return ['==', 'is', '<=', '>='].includes(operators[0] ?? '') && samePython(operands[0], operands[1]);
}

function isConstantUnittestAssert(call: Node): boolean {
  const callee = call.childForFieldName('function')?.text ?? '';
  const args = call.childForFieldName('arguments')?.namedChildren.filter((node) => node !== null) ?? [];
  const method = /(?:^|\.)(assert\w+)$/.exec(callee)?.[1];
  if (method === undefined) return false;
  if (method === 'assertTrue' || method === 'assertIsNotNone')
    return isPythonLiteral(args[0]) && args[0]?.type !== 'none' && args[0]?.type !== 'false';
  if (method === 'assertEqual' || method === 'assertEquals' || method === 'assertIs')
    return samePython(args[0], args[1]);
  return false;
}

function pythonString(node: Node): string | undefined {
  if (node.namedChildren.some((child) => child?.type === 'interpolation')) return undefined;
  const content = node.namedChildren.find((child) => child?.type === 'string_content');
  return content?.text ?? '';
}

// Shared ----------------------------------------------------------------------------------------

/** A path without its extension, `/`-separated. */
function stem(path: string): string {
  const clean = normalize(path).split('\\').join('/');
  return clean.slice(0, clean.length - extname(clean).length);
}

/** The modules a Python file can be imported as: `src/pkg/mod.py` -> `src.pkg.mod`, `pkg.mod`, `mod`. */
function pythonModules(implFile: string): string[] {
  const parts = stem(implFile).split('/');
  if (parts.at(-1) === '__init__') parts.pop();
  return parts.map((_, index) => parts.slice(index).join('.')).filter((module) => module !== '');
}

function resolvesTo(specifier: string, testFile: string, implFile: string): boolean {
  if (!specifier.startsWith('.')) {
    // A package or alias import (`@/add`, `mypkg/add`): its last segments must name the file.
    const wanted = stem(implFile);
    const given = stem(specifier.replace(/^[@~#]\//, ''));
    return (
      wanted === given ||
      wanted.endsWith(`/${given}`) ||
      (given.includes('/') && given.endsWith(`/${basename(wanted)}`))
    );
  }
  const target = stem(join(dirname(testFile), specifier));
  const wanted = stem(implFile);
  return target === wanted || (basename(wanted) === 'index' && target === dirname(wanted));
}

/** Modules a JavaScript test imports that are never the code under test: test tooling and Node's own. */
const JS_TOOLING =
  /^(node:.*|vitest(\/.*)?|@vitest\/.*|jest|@jest\/.*|mocha|chai(\/.*)?|sinon|ava|tap|uvu(\/.*)?|supertest|@testing-library\/.*|expect)$/;

/**
 * Whether an import can be the implementation file. Leaning to yes where the review cannot tell:
 * a directory or its index (re-exports), a bare package name that is not test tooling (the
 * project's own package), for Python a package that is a folder of the implementation's path.
 */
function importsImpl(specifier: string, testFile: string, implFile: string, python: boolean): boolean {
  if (python) {
    const folders = stem(implFile).split('/');
    return folders.includes(specifier.split('.')[0] ?? '');
  }
  if (resolvesTo(specifier, testFile, implFile)) return true;
  if (!specifier.startsWith('.')) return !JS_TOOLING.test(specifier) && !isBuiltin(specifier);
  const target = stem(join(dirname(testFile), specifier));
  const folder = dirname(stem(implFile));
  return target === folder || target === `${folder}/index`;
}

function mockTargetsImpl(target: string, input: TestQualityInput, facts: TestFileFacts): boolean {
  if (!facts.python) return resolvesTo(target, input.testFile, input.implFile);
  // `patch("calc.add")` where the test imports `add` from the implementation's module replaces
  // the very function under test; patching a collaborator the module uses (`calc.fetch`) is fine.
  // `sys.modules["calc"] = ...` (recorded as `calc.`) replaces the whole module.
  const modules = pythonModules(input.implFile);
  if (target.endsWith('.')) return modules.some((module) => target === `${module}.`);
  return facts.imports.some(
    (specifier) =>
      specifier === target &&
      modules.some((module) => specifier.startsWith(`${module}.`) || specifier.endsWith(`.${module}`)),
  );
}
