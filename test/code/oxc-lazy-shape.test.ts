import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OxcExtractor } from '../../src/code/index/extract-oxc.js';
import { LineTable } from '../../src/code/index/line-table.js';
import { loadOxcLazy, type LazyParseResult, type OxcLazyApi } from '../support/oxc-lazy-nodes.js';

/**
 * oxc-parser's lazy API is experimental and undeclared in its types. The index reads none of its
 * nodes (it reads the raw buffer), but `oxc-raw-layout.test.ts` checks every raw read against
 * them (`test/support/oxc-lazy-nodes.ts`): this pins the shape of the fields it compares with,
 * and how oxc parses (offsets, errors, JSX), so that an upgrade that renames a node type or
 * changes a field's type fails here, loudly.
 */

async function api(): Promise<OxcLazyApi> {
  const loaded = await loadOxcLazy();
  if (loaded === undefined) throw new Error('oxc-parser lazy API did not load');
  return loaded;
}

const SOURCE = `import def, { a as b } from './x.js';
import * as ns from 'ns';
/** Doc. */
export function f(x: number): number { return g(x); }
export default class K { @d m(): void {} p = () => 1; accessor q = () => 2; #r() { this.#r(); } }
export { f as h };
export { z } from './z.js';
export * as all from './all.js';
declare function ambient(): void;
interface I { x: number }
enum E { A }
type T = string;
namespace N.M { export const v = 1; }
declare module 'm' {}
exports.c = function () {};
const v = require('v'), w = () => ns.k\`t\`;
new Widget(import('./lazy.js'));
super_.call();
`;

type Kind = 'string' | 'number' | 'boolean' | 'node' | 'node|null' | 'array';

/** Asserts `node[key]` has the kind the extractor expects. */
function expectField(node: unknown, key: string, kind: Kind, where: string): void {
  const value = (node as Record<string, unknown>)[key];
  const label = `${where}.${key}`;
  if (kind === 'array') expect(Array.isArray(value), label).toBe(true);
  else if (kind === 'node' || kind === 'node|null') {
    if (kind === 'node|null' && value === null) return;
    expect(typeof value, label).toBe('object');
    expect(typeof (value as { type?: unknown }).type, `${label}.type`).toBe('string');
    expect(typeof (value as { start?: unknown }).start, `${label}.start`).toBe('number');
    expect(typeof (value as { end?: unknown }).end, `${label}.end`).toBe('number');
  } else expect(typeof value, label).toBe(kind);
}

/** The first node of each visitor type, collected by one walk (the walk itself is part of the API). */
function collect(oxc: OxcLazyApi, result: LazyParseResult, types: readonly string[]): Map<string, unknown[]> {
  const seen = new Map<string, unknown[]>(types.map((type) => [type, []]));
  const handlers: Record<string, (node: never) => void> = {};
  for (const type of types) handlers[type] = (node: never) => seen.get(type)?.push(node);
  result.visit(new oxc.Visitor(handlers));
  return seen;
}

describe('oxc-parser lazy API shape', () => {
  it('is pinned to an exact version', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['oxc-parser']).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('builds the extractor’s visitor (it throws on a node type the API no longer has)', async () => {
    const oxc = await api();
    expect(() => new OxcExtractor(oxc)).not.toThrow();
    expect(() => new oxc.Visitor({ NoSuchNode: () => undefined })).toThrow(/Unknown node type/);
  });

  it('gives the program, module record and comments with the fields the extractor reads', async () => {
    const oxc = await api();
    const result = oxc.parseSync('src/shape.ts', SOURCE, {
      lang: 'ts',
      sourceType: 'unambiguous',
    });
    try {
      expect(result.errors.length).toBe(0);
      expect(typeof result.dispose).toBe('function');
      const body = [...result.program.body];
      const byType = (type: string): Record<string, unknown> => {
        const found = body.find((node) => node.type === type);
        if (found === undefined) throw new Error(`no top-level ${type}`);
        return found as unknown as Record<string, unknown>;
      };
      expect(body.map((node) => node.type)).toEqual([
        'ImportDeclaration',
        'ImportDeclaration',
        'ExportDeclaration',
        'ExportDefaultDeclaration',
        'ExportNamedDeclaration',
        'ExportFromDeclaration',
        'ExportAllDeclaration',
        'TSDeclareFunction',
        'TSInterfaceDeclaration',
        'TSEnumDeclaration',
        'TSTypeAliasDeclaration',
        'TSNamespaceDeclaration',
        'TSExternalModuleDeclaration',
        'ExpressionStatement',
        'VariableDeclaration',
        'ExpressionStatement',
        'ExpressionStatement',
      ]);
      expect((byType('ExportDeclaration').declaration as { type: string }).type).toBe('FunctionDeclaration');
      const fn = byType('ExportDeclaration').declaration;
      expectField(fn, 'id', 'node', 'Function');
      expectField((fn as { id: unknown }).id, 'name', 'string', 'Function.id');
      expectField(fn, 'body', 'node|null', 'Function');
      const klass = byType('ExportDefaultDeclaration').declaration as Record<string, unknown>;
      expect(klass.type).toBe('ClassDeclaration');
      expectField(klass, 'id', 'node|null', 'Class');
      expectField(klass, 'decorators', 'array', 'Class');
      expectField(klass, 'body', 'node', 'Class');
      const members = [...(klass.body as { body: readonly Record<string, unknown>[] }).body];
      expect(members.map((member) => member.type)).toEqual([
        'MethodDefinition',
        'PropertyDefinition',
        'AccessorProperty',
        'MethodDefinition',
      ]);
      for (const member of members) {
        expectField(member, 'key', 'node', String(member.type));
        expectField(member, 'computed', 'boolean', String(member.type));
        expectField(member, 'value', 'node|null', String(member.type));
        expectField(member, 'decorators', 'array', String(member.type));
      }
      expect((members[0]?.value as { type: string }).type).toBe('FunctionExpression');
      expect((members[1]?.value as { type: string }).type).toBe('ArrowFunctionExpression');
      expect((members[3]?.key as { type: string }).type).toBe('PrivateIdentifier');
      const specifiers = byType('ExportNamedDeclaration').specifiers as readonly unknown[];
      expectField(specifiers[0], 'local', 'node', 'ExportSpecifier');
      expectField(specifiers[0], 'exported', 'node', 'ExportSpecifier');
      expectField(byType('ExportFromDeclaration'), 'source', 'node', 'ExportFromDeclaration');
      expectField(byType('ExportFromDeclaration'), 'specifiers', 'array', 'ExportFromDeclaration');
      expectField(byType('ExportAllDeclaration'), 'exported', 'node|null', 'ExportAllDeclaration');
      expectField(byType('ExportAllDeclaration'), 'source', 'node', 'ExportAllDeclaration');
      for (const type of ['TSInterfaceDeclaration', 'TSEnumDeclaration', 'TSExternalModuleDeclaration']) {
        expectField(byType(type), 'id', 'node', type);
        expectField(byType(type), 'body', 'node|null', type);
      }
      expectField(byType('TSTypeAliasDeclaration'), 'id', 'node', 'TSTypeAliasDeclaration');
      const namespace = byType('TSNamespaceDeclaration');
      expect((namespace.body as { type: string }).type).toBe('TSNamespaceDeclaration'); // `N.M` nests
      expectField(namespace, 'id', 'node', 'TSNamespaceDeclaration');
      const assignment = (body[13] as unknown as { expression: Record<string, unknown> }).expression;
      expect(assignment.type).toBe('AssignmentExpression');
      expectField(assignment, 'operator', 'string', 'AssignmentExpression');
      expectField(assignment, 'left', 'node', 'AssignmentExpression');
      expectField(assignment, 'right', 'node', 'AssignmentExpression');
      const declaration = byType('VariableDeclaration');
      expect(declaration.kind).toBe('const');
      const declarators = [...(declaration.declarations as readonly Record<string, unknown>[])];
      expect((declarators[0]?.id as { type: string }).type).toBe('BindingIdentifier');
      expectField(declarators[0], 'init', 'node|null', 'VariableDeclarator');

      const [first, second] = [...result.module.staticImports];
      expect(first?.moduleRequest).toMatchObject({ value: './x.js' });
      expect(SOURCE.slice(first?.moduleRequest.start, first?.moduleRequest.end)).toBe("'./x.js'");
      const importNames = [...(first?.entries ?? [])].map((entry) => entry.importName);
      expect(typeof importNames[0]).toBe('object');
      expect('value' in (importNames[0] as object)).toBe(false); // A default import: a span, no name.
      expect(importNames[1]).toMatchObject({ value: 'a' });
      expect([...(second?.entries ?? [])][0]).toMatchObject({
        importName: 'namespaceObject',
        localName: { value: 'ns' },
      });
      const comment = [...result.comments][0];
      expect(SOURCE.slice(comment?.start, comment?.end)).toBe('/** Doc. */');
    } finally {
      result.dispose();
    }
  });

  it('visits calls, constructions, tagged templates, dynamic imports and declarators with their fields', async () => {
    const oxc = await api();
    const result = oxc.parseSync('src/shape.ts', SOURCE, {
      lang: 'ts',
      sourceType: 'unambiguous',
    });
    try {
      const seen = collect(oxc, result, [
        'CallExpression',
        'NewExpression',
        'TaggedTemplateExpression',
        'ImportExpression',
        'VariableDeclarator',
      ]);
      const calls = (seen.get('CallExpression') ?? []) as Record<string, unknown>[];
      const callees = calls.map((call) => (call.callee as { type: string }).type);
      expect(callees).toEqual([
        'IdentifierReference',
        'PrivateFieldExpression',
        'IdentifierReference',
        'StaticMemberExpression',
      ]);
      for (const call of calls) {
        expectField(call, 'callee', 'node', 'CallExpression');
        expectField(call, 'arguments', 'array', 'CallExpression');
      }
      expectField(calls[0]?.callee, 'name', 'string', 'IdentifierReference');
      const member = calls[1]?.callee as Record<string, unknown>;
      expectField(member, 'object', 'node', 'PrivateFieldExpression');
      expectField(member, 'property', 'node', 'PrivateFieldExpression');
      expect(SOURCE.slice((member.property as { start: number }).start, (member.property as { end: number }).end)).toBe(
        '#r',
      );
      expect((member.object as { type: string }).type).toBe('ThisExpression');
      const required = calls[2] as { arguments: readonly { type: string }[] };
      expect(required.arguments[0]?.type).toBe('StringLiteral');
      expectField((seen.get('NewExpression') ?? [])[0], 'callee', 'node', 'NewExpression');
      expectField((seen.get('TaggedTemplateExpression') ?? [])[0], 'tag', 'node', 'TaggedTemplateExpression');
      const dynamic = (seen.get('ImportExpression') ?? [])[0] as { source: { type: string } };
      expect(dynamic.source.type).toBe('StringLiteral');
      expect(seen.get('VariableDeclarator')).toHaveLength(3); // `v`, `w` and the namespace's `v`.
    } finally {
      result.dispose();
    }
  });

  it('counts offsets in UTF-16 code units, as JavaScript strings index', async () => {
    const oxc = await api();
    const text = "const a = '😀é'; /* ü */ export function after(): void {}\n";
    const result = oxc.parseSync('a.ts', text, { lang: 'ts', sourceType: 'unambiguous' });
    try {
      const last = [...result.program.body].at(-1);
      expect(text.slice(last?.start, last?.end)).toBe('export function after(): void {}');
      const comment = [...result.comments][0];
      expect(text.slice(comment?.start, comment?.end)).toBe('/* ü */');
    } finally {
      result.dispose();
    }
  });

  it('reports a fatal syntax error with an empty program (hence the tree-sitter fallback)', async () => {
    const oxc = await api();
    const result = oxc.parseSync('a.ts', 'export function ok() {}\nfunction broken( {\n', {
      lang: 'ts',
      sourceType: 'unambiguous',
    });
    try {
      expect(result.errors.length).toBeGreaterThan(0);
      expect(result.program.body.length).toBe(0);
    } finally {
      result.dispose();
    }
  });

  it('rejects JSX in a file parsed as plain `js`, and accepts it as `jsx`', async () => {
    const oxc = await api();
    const text = 'export const View = () => <div />;\n';
    for (const [lang, errors] of [
      ['js', true],
      ['jsx', false],
    ] as const) {
      const result = oxc.parseSync('view.js', text, { lang, sourceType: 'unambiguous' });
      expect(result.errors.length > 0, lang).toBe(errors);
      result.dispose();
    }
  });
});

describe('LineTable', () => {
  it('numbers lines from 1, a newline ending its own line', () => {
    const lines = new LineTable('a\nbc\n\nd');
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((offset) => lines.line(offset))).toEqual([1, 1, 2, 2, 2, 3, 4, 4]);
    expect(new LineTable('').line(0)).toBe(1);
  });

  it('numbers the lines of a text longer than its first buffer, and counts them', () => {
    const text = 'x\n'.repeat(200_000);
    const lines = new LineTable(text);
    expect(lines.count).toBe(200_000);
    expect([0, 2, text.length - 2, text.length].map((offset) => lines.line(offset))).toEqual([1, 2, 200_000, 200_001]);
  });

  it('refuses to be read once the next table is made (they share one buffer)', () => {
    const first = new LineTable('a\nb');
    expect(first.line(2)).toBe(2);
    new LineTable('c');
    expect(() => first.line(2)).toThrow(/after the next one/);
  });
});
