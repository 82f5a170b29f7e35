import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OxcExtractor } from '../../src/code/index/extract-oxc.js';
import {
  loadOxcLazy,
  type LazyCall,
  type LazyClass,
  type LazyFunction,
  type LazyIdentifier,
  type LazyImportExpression,
  type LazyMember,
  type LazyNode,
  type LazyParseResult,
  type LazyTaggedTemplate,
  type LazyVariableDeclaration,
  type LazyVariableDeclarator,
  type OxcLazyApi,
} from '../support/oxc-lazy-nodes.js';
import {
  ARROW_BODY,
  ASSIGN,
  ASSIGNMENT_LEFT,
  ASSIGNMENT_OPERATOR,
  ASSIGNMENT_RIGHT,
  CLASS_BODY,
  CLASS_DECORATORS,
  CLASS_ELEMENT,
  CLASS_ELEMENTS,
  CLASS_ID,
  DECORATOR_SIZE,
  DEFAULT_DECLARATION,
  EXPORT_ASSIGNMENT_EXPRESSION,
  EXPORT_DEFAULT_DECLARATION,
  MODULE_BODY,
  MODULE_ID,
  NAMESPACE_BODY,
  NAMESPACE_BODY_NESTED,
  NAMESPACE_EXPORT_ID,
  NAMESPACE_ID,
  MEMBER_DECORATORS,
  MEMBER_KEY,
  METHOD_COMPUTED,
  METHOD_VALUE,
  PROPERTY_COMPUTED,
  PROPERTY_VALUE,
  CALL_ARGUMENTS,
  CALL_CALLEE,
  DECLARATION_ID,
  DECLARATOR_ID,
  DECLARATOR_INIT,
  DECLARATOR_SIZE,
  ENUM_BODY,
  INTERFACE_BODY,
  ENTRY_IMPORT_NAME,
  ENTRY_LOCAL_NAME,
  ENUM_FIELD_SIZE,
  ERRORS,
  EXPORT_ALL_EXPORTED,
  EXPORT_ALL_SOURCE,
  EXPORT_DECLARATION,
  EXPORT_FROM_SOURCE,
  EXPORT_SPECIFIER_SIZE,
  EXPORT_SPECIFIERS,
  EXPRESSION,
  FUNCTION_BODY,
  FUNCTION_ID,
  IMPORT_ENTRIES,
  IMPORT_ENTRY_SIZE,
  IMPORT_MODULE_REQUEST,
  IMPORT_NAME_NAMED,
  IMPORT_NAME_NAMESPACE,
  IMPORT_SOURCE,
  MEMBER_OBJECT,
  MEMBER_PROPERTY,
  MODULE_RECORD,
  NAME_SPAN_VALUE,
  NO_ENUM,
  OXC_LAYOUT_VERSION,
  PROGRAM_BODY,
  SPECIFIER_EXPORTED,
  SPECIFIER_LOCAL,
  STATEMENT,
  STATEMENT_EXPRESSION,
  STATIC_IMPORT_SIZE,
  STATIC_IMPORTS,
  TAG,
  VARIABLE_DECLARATIONS,
  VARIABLE_KIND,
  type RawView,
} from '../../src/code/index/oxc-raw-layout.js';
import { GENERATED_WALK, generateRawWalk, oxcLazyWalkSource } from '../../scripts/generate-oxc-raw-walk.js';

/**
 * The extractor reads oxc-parser's raw AST buffer at fixed offsets (`oxc-raw-layout.ts`) and
 * walks it with oxc's own walker made to build no node objects (`oxc-raw-walk.generated.ts`).
 * Both follow the pinned oxc-parser: this reads one source through them and through oxc's lazy
 * nodes and compares, so an upgrade that moves a field, renumbers a tag or changes the walker
 * fails here instead of quietly changing the index.
 */

async function api(): Promise<OxcLazyApi> {
  const loaded = await loadOxcLazy();
  if (loaded === undefined) throw new Error('oxc-parser lazy API did not load');
  return loaded;
}

// Non-ASCII text and an escaped identifier: a `Str` is then not a slice of the source.
const SOURCE = `import def, { a as b, "c d" as é } from './x.js';
import * as ns from 'ns';
/** Doc. */
export function f(x: number): number { return g(x); }
export const k = async () => { await \\u0068(1); }, m = function () {}, n = 2;
let plain;
var ünicode = h('ü');
declare function ambient(): void;
function overload(a: string): void;
function local() { return 1; }
export interface I extends J { x: number }
type T = string;
declare enum E { A }
export { f as h, f as 'q' };
export { z as zz } from './z.js';
export * as all from './all.js';
export * from './every.js';
module.exports.d = () => 1;
abstract class Shape<T> extends Base {
  /** Doc. */ @log @trace('x') area(): number { return 1; }
  [Symbol.iterator]() {}
  handler = (e: T) => e;
  other = function named() {};
  accessor acc = () => 2;
  abstract draw(): void;
  static { init(); }
  plain = 1;
  ['comp'] = () => 0;
}
export default class K { #r() { this.#r(); } }
exports.c = function () {};
const v = require('v'), w = () => ns.k\`t\`;
new Widget(import('./lazy.js'));
super_.call(); this.x?.y(); program.option('--flag');
if (v) { inner(); }
`;

/** oxc's name for an `Expression` or `Statement` tag read from the buffer. */
function expressionType(raw: RawView, field: number): string {
  const tag = raw.bytes[field];
  const name = Object.entries(EXPRESSION).find(([, value]) => value === tag)?.[0];
  return name ?? `other:${tag}`;
}

/** The tag at `field` is the one named `type` in EXPRESSION, or none of theirs when that has no such name. */
function expectTag(raw: RawView, field: number, type: string): void {
  if (type in EXPRESSION) expect(expressionType(raw, field)).toBe(type);
  else expect(expressionType(raw, field)).toMatch(/^other:/);
}

function lazyWalk(oxc: OxcLazyApi, result: LazyParseResult, types: readonly string[]): Map<string, LazyNode[]> {
  const seen = new Map<string, LazyNode[]>(types.map((type) => [type, []]));
  const handlers: Record<string, (node: never) => void> = {};
  for (const type of types) handlers[type] = (node: never) => seen.get(type)?.push(node);
  result.visit(new oxc.Visitor(handlers));
  return seen;
}

function rawWalk(oxc: OxcLazyApi, result: LazyParseResult, types: readonly string[]): Map<string, number[]> {
  const seen = new Map<string, number[]>(types.map((type) => [type, []]));
  const handlers: Record<string, (pos: number) => void> = {};
  for (const type of types) handlers[type] = (pos: number) => seen.get(type)?.push(pos);
  result.walkRaw(oxc.rawVisitors(handlers));
  return seen;
}

const WALKED = [
  'CallExpression',
  'NewExpression',
  'TaggedTemplateExpression',
  'ImportExpression',
  'VariableDeclarator',
] as const;

describe('oxc-parser raw AST layout', () => {
  it('is the layout of the installed oxc-parser, the version package.json pins', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const installed = JSON.parse(
      readFileSync(new URL('../../node_modules/oxc-parser/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(manifest.dependencies['oxc-parser']).toBe(OXC_LAYOUT_VERSION);
    expect(installed.version).toBe(OXC_LAYOUT_VERSION);
  });

  it('walks with oxc’s own lazy walker, made to build no node objects', () => {
    expect(readFileSync(GENERATED_WALK, 'utf8')).toBe(generateRawWalk(oxcLazyWalkSource()));
  });

  it('refuses a visitor the raw walk would never call: a leaf node’s, a type’s, or an unknown node’s', async () => {
    const oxc = await api();
    expect(() => oxc.rawVisitors({ IdentifierReference: () => undefined })).toThrow(/not walked/);
    expect(() => oxc.rawVisitors({ TSTypeReference: () => undefined })).toThrow(/not walked/);
    expect(() => oxc.rawVisitors({ NoSuchNode: () => undefined })).toThrow(/Unknown node type/);
    expect(() => oxc.rawVisitors({ CallExpression: () => undefined })).not.toThrow();
  });

  it('visits the same nodes as the lazy walk, and reads the fields the call visitors use where the lazy nodes have them', async () => {
    const oxc = await api();
    const result = oxc.parseSync('src/layout.ts', SOURCE, { lang: 'ts', sourceType: 'module' });
    try {
      expect(result.errors).toHaveLength(0);
      const { raw } = result;
      const lazy = lazyWalk(oxc, result, WALKED);
      const positions = rawWalk(oxc, result, WALKED);
      for (const type of WALKED) {
        const nodes = lazy.get(type) ?? [];
        const found = positions.get(type) ?? [];
        expect(found.length, type).toBe(nodes.length);
        expect(nodes.length, type).toBeGreaterThan(0);
        nodes.forEach((node, index) => {
          const pos = found[index] ?? -1;
          expect([raw.start(pos), raw.end(pos)], type).toEqual([node.start, node.end]);
        });
      }
      for (const [index, node] of (lazy.get('CallExpression') as LazyCall[]).entries()) {
        const pos = positions.get('CallExpression')?.[index] ?? -1;
        const { callee } = node;
        expectTag(raw, pos + CALL_CALLEE, callee.type);
        const calleePos = raw.boxed(pos + CALL_CALLEE);
        expect(raw.start(calleePos)).toBe(callee.start);
        if (callee.type === 'IdentifierReference')
          expect(raw.identifierName(calleePos)).toBe((callee as LazyIdentifier).name);
        if (callee.type === 'StaticMemberExpression' || callee.type === 'PrivateFieldExpression') {
          const { object, property } = callee as LazyMember;
          expect(expressionType(raw, calleePos + MEMBER_OBJECT)).toBe(object.type);
          expect(raw.start(raw.boxed(calleePos + MEMBER_OBJECT))).toBe(object.start);
          expect([raw.start(calleePos + MEMBER_PROPERTY), raw.end(calleePos + MEMBER_PROPERTY)]).toEqual([
            property.start,
            property.end,
          ]);
        }
        expect(raw.word(pos + CALL_ARGUMENTS + 8)).toBe(node.arguments.length);
        const first = node.arguments[0];
        if (first !== undefined) {
          const field = raw.word(pos + CALL_ARGUMENTS);
          expectTag(raw, field, first.type);
          expect(raw.start(raw.boxed(field))).toBe(first.start);
        }
      }
      for (const [index, node] of (lazy.get('NewExpression') as LazyCall[]).entries()) {
        const pos = positions.get('NewExpression')?.[index] ?? -1;
        expect(raw.identifierName(raw.boxed(pos + CALL_CALLEE))).toBe((node.callee as LazyIdentifier).name);
      }
      for (const [index, node] of (lazy.get('TaggedTemplateExpression') as LazyTaggedTemplate[]).entries()) {
        const pos = positions.get('TaggedTemplateExpression')?.[index] ?? -1;
        expect(expressionType(raw, pos + TAG)).toBe(node.tag.type);
        expect(raw.start(raw.boxed(pos + TAG))).toBe(node.tag.start);
      }
      for (const [index, node] of (lazy.get('ImportExpression') as LazyImportExpression[]).entries()) {
        const pos = positions.get('ImportExpression')?.[index] ?? -1;
        expect(expressionType(raw, pos + IMPORT_SOURCE)).toBe(node.source.type);
        expect(raw.end(raw.boxed(pos + IMPORT_SOURCE))).toBe(node.source.end);
      }
      for (const [index, node] of (lazy.get('VariableDeclarator') as LazyVariableDeclarator[]).entries()) {
        const pos = positions.get('VariableDeclarator')?.[index] ?? -1;
        expect(raw.identifierName(raw.boxed(pos + DECLARATOR_ID))).toBe((node.id as LazyIdentifier).name);
        if (node.init === null) expect(raw.bytes[pos + DECLARATOR_INIT]).toBe(NO_ENUM);
        else expect(raw.start(raw.boxed(pos + DECLARATOR_INIT))).toBe(node.init.start);
      }
      // An escaped identifier's name is oxc's unescaped one.
      expect(
        positions.get('CallExpression')?.some((pos) => raw.identifierName(raw.boxed(pos + CALL_CALLEE)) === 'h'),
      ).toBe(true);
    } finally {
      result.dispose();
    }
  });

  it('gives an escaped identifier its unescaped name, in an ASCII file and in one that is not', async () => {
    const extractor = new OxcExtractor(await api());
    for (const tail of ['', '// é\n']) {
      const source = `import { \\u0061b as c } from 'm';\n\\u0066oo(1);\nexport function \\u0062ar() {}\n${tail}`;
      const result = extractor.extract('src/escaped.ts', source, 'typescript');
      expect(result?.imports.map((ref) => ref.names)).toEqual([['ab']]);
      expect(result?.calls.map((call) => call.callee)).toEqual(['foo']);
      expect(result?.symbols.map((symbol) => symbol.name)).toEqual(['bar']);
    }
  });

  it('counts the parse errors where the lazy result lists them', async () => {
    const oxc = await api();
    for (const source of [SOURCE, 'const = ;', 'function (']) {
      const result = oxc.parseSync('src/errors.ts', source, {
        lang: 'ts',
        sourceType: 'module',
      });
      try {
        expect(result.raw.word(result.dataPos + ERRORS + 8), source).toBe(result.errors.length);
      } finally {
        result.dispose();
      }
    }
  });

  it('reads the statements, declarations and module record the declarations reader uses where the lazy nodes have them', async () => {
    const oxc = await api();
    const result = oxc.parseSync('src/layout.ts', SOURCE, { lang: 'ts', sourceType: 'module' });
    try {
      const { raw } = result;
      const body = result.program.body;
      const first = raw.word(result.programPos + PROGRAM_BODY);
      expect(raw.word(result.programPos + PROGRAM_BODY + 8)).toBe(body.length);
      const tags = new Map<number, string[]>([
        [STATEMENT.ExpressionStatement, ['ExpressionStatement']],
        [STATEMENT.VariableDeclaration, ['VariableDeclaration']],
        [STATEMENT.Function, ['FunctionDeclaration', 'TSDeclareFunction']],
        [STATEMENT.ImportDeclaration, ['ImportDeclaration']],
        [STATEMENT.ExportDeclaration, ['ExportDeclaration']],
        [STATEMENT.TSInterfaceDeclaration, ['TSInterfaceDeclaration']],
        [STATEMENT.TSTypeAliasDeclaration, ['TSTypeAliasDeclaration']],
        [STATEMENT.TSEnumDeclaration, ['TSEnumDeclaration']],
        [STATEMENT.ExportNamedDeclaration, ['ExportNamedDeclaration']],
        [STATEMENT.ExportFromDeclaration, ['ExportFromDeclaration']],
        [STATEMENT.ExportAllDeclaration, ['ExportAllDeclaration']],
        [STATEMENT.Class, ['ClassDeclaration']],
      ]);
      const read = new Set<string>();
      for (const [index, node] of body.entries()) {
        const field = first + index * ENUM_FIELD_SIZE;
        const pos = raw.boxed(field);
        expect([raw.start(pos), raw.end(pos)]).toEqual([node.start, node.end]);
        const types = tags.get(raw.bytes[field] ?? NO_ENUM);
        if (types === undefined) {
          // Only the other statements before the declarations' tags are skipped unread.
          if ((raw.bytes[field] ?? NO_ENUM) < STATEMENT.VariableDeclaration) expect(node.type).toMatch(/Statement$/);
          continue;
        }
        expect(types).toContain(node.type);
        read.add(node.type);
        type Name = LazyNode & { type: string };
        type Specifiers = LazyNode & { specifiers: { local: Name; exported: Name }[]; source?: LazyNode };
        const spanAt = (at: number): number[] => [raw.start(at), raw.end(at)];
        if (node.type === 'ExportNamedDeclaration' || node.type === 'ExportFromDeclaration') {
          const { specifiers, source } = node as Specifiers;
          expect(raw.word(pos + EXPORT_SPECIFIERS + 8)).toBe(specifiers.length);
          for (const [at, specifier] of specifiers.entries()) {
            const specifierPos = raw.word(pos + EXPORT_SPECIFIERS) + at * EXPORT_SPECIFIER_SIZE;
            expect(spanAt(specifierPos + SPECIFIER_LOCAL + 8)).toEqual([specifier.local.start, specifier.local.end]);
            expect(spanAt(specifierPos + SPECIFIER_EXPORTED + 8)).toEqual([
              specifier.exported.start,
              specifier.exported.end,
            ]);
          }
          if (source !== undefined) expect(spanAt(pos + EXPORT_FROM_SOURCE)).toEqual([source.start, source.end]);
        }
        if (node.type === 'ExportAllDeclaration') {
          const { exported, source } = node as LazyNode & { exported: LazyNode | null; source: LazyNode };
          if (exported === null) expect(raw.bytes[pos + EXPORT_ALL_EXPORTED]).toBe(NO_ENUM);
          else expect(spanAt(pos + EXPORT_ALL_EXPORTED + 8)).toEqual([exported.start, exported.end]);
          expect(spanAt(pos + EXPORT_ALL_SOURCE)).toEqual([source.start, source.end]);
        }
        if (node.type === 'ExpressionStatement') {
          const expression = (node as LazyNode & { expression: LazyNode }).expression;
          expectTag(raw, pos + STATEMENT_EXPRESSION, expression.type);
          if (expression.type === 'AssignmentExpression') {
            const { operator, left, right } = expression as LazyNode & {
              operator: string;
              left: LazyNode;
              right: LazyNode;
            };
            const assignment = raw.boxed(pos + STATEMENT_EXPRESSION);
            expect(raw.bytes[assignment + ASSIGNMENT_OPERATOR] === ASSIGN).toBe(operator === '=');
            expect(spanAt(raw.boxed(assignment + ASSIGNMENT_LEFT))).toEqual([left.start, left.end]);
            expectTag(raw, assignment + ASSIGNMENT_RIGHT, right.type);
            expect(raw.start(raw.boxed(assignment + ASSIGNMENT_RIGHT))).toBe(right.start);
          }
        }
        if (node.type === 'ClassDeclaration') {
          const cls = node as LazyClass;
          expect(spanAt(pos + CLASS_ID)).toEqual([cls.id?.start, cls.id?.end]);
          expect(raw.word(pos + CLASS_DECORATORS + 8)).toBe(cls.decorators.length);
          const body = raw.word(pos + CLASS_BODY);
          expect(raw.start(body)).toBe(cls.body.start);
          expect(raw.word(body + CLASS_ELEMENTS + 8)).toBe(cls.body.body.length);
          const kinds = new Set<string>();
          for (const [at, member] of cls.body.body.entries()) {
            const field = raw.word(body + CLASS_ELEMENTS) + at * ENUM_FIELD_SIZE;
            const memberPos = raw.boxed(field);
            expect(spanAt(memberPos)).toEqual([member.start, member.end]);
            const tag = raw.bytes[field];
            const isMethod = member.type === 'MethodDefinition' || member.type === 'TSAbstractMethodDefinition';
            if (isMethod) expect(tag).toBe(CLASS_ELEMENT.MethodDefinition);
            else if (member.type === 'PropertyDefinition') expect(tag).toBe(CLASS_ELEMENT.PropertyDefinition);
            else if (member.type === 'AccessorProperty') expect(tag).toBe(CLASS_ELEMENT.AccessorProperty);
            else {
              expect(Object.values(CLASS_ELEMENT)).not.toContain(tag);
              continue;
            }
            kinds.add(member.type);
            expect(spanAt(raw.boxed(memberPos + MEMBER_KEY))).toEqual([member.key.start, member.key.end]);
            expect(raw.bytes[memberPos + (isMethod ? METHOD_COMPUTED : PROPERTY_COMPUTED)] === 1).toBe(member.computed);
            expect(raw.word(memberPos + MEMBER_DECORATORS + 8)).toBe(member.decorators.length);
            const lastDecorator = member.decorators[member.decorators.length - 1];
            if (lastDecorator !== undefined) {
              const last = raw.word(memberPos + MEMBER_DECORATORS) + (member.decorators.length - 1) * DECORATOR_SIZE;
              expect(raw.end(last)).toBe(lastDecorator.end);
            }
            const { value } = member;
            if (isMethod) {
              const fn = raw.word(memberPos + METHOD_VALUE);
              expect(raw.start(fn)).toBe(value?.start);
              const fnBody = (value as LazyFunction).body;
              if (fnBody === null) expect(raw.word(fn + FUNCTION_BODY)).toBe(0);
              else expect(raw.start(raw.word(fn + FUNCTION_BODY))).toBe(fnBody.start);
            } else if (value === null) expect(raw.bytes[memberPos + PROPERTY_VALUE]).toBe(NO_ENUM);
            else {
              expectTag(raw, memberPos + PROPERTY_VALUE, value.type);
              expect(raw.start(raw.boxed(memberPos + PROPERTY_VALUE))).toBe(value.start);
            }
          }
          expect([...kinds].sort()).toEqual([
            'AccessorProperty',
            'MethodDefinition',
            'PropertyDefinition',
            'TSAbstractMethodDefinition',
          ]);
        }
        let declaration: LazyNode = node;
        let declarationPos = pos;
        if (node.type === 'ExportDeclaration') {
          declaration = (node as LazyNode & { declaration: LazyNode }).declaration;
          declarationPos = raw.boxed(pos + EXPORT_DECLARATION);
          expect(raw.start(declarationPos)).toBe(declaration.start);
        }
        if (declaration.type === 'FunctionDeclaration' || declaration.type === 'TSDeclareFunction') {
          const fn = declaration as LazyFunction;
          expect(raw.identifierName(declarationPos + FUNCTION_ID)).toBe(fn.id?.name);
          const bodyPos = raw.word(declarationPos + FUNCTION_BODY);
          if (fn.body === null) expect(bodyPos).toBe(0);
          else expect(raw.start(bodyPos)).toBe(fn.body.start);
        }
        const named = declaration as LazyNode & { id: LazyNode; body?: LazyNode | null };
        if (declaration.type === 'TSInterfaceDeclaration' || declaration.type === 'TSEnumDeclaration') {
          read.add(declaration.type);
          expect([raw.start(declarationPos + DECLARATION_ID), raw.end(declarationPos + DECLARATION_ID)]).toEqual([
            named.id.start,
            named.id.end,
          ]);
          const bodyStart =
            declaration.type === 'TSEnumDeclaration'
              ? raw.start(declarationPos + ENUM_BODY)
              : raw.start(raw.word(declarationPos + INTERFACE_BODY));
          expect(bodyStart).toBe(named.body?.start);
        }
        if (declaration.type === 'TSTypeAliasDeclaration')
          expect(raw.end(declarationPos + DECLARATION_ID)).toBe(named.id.end);
        if (declaration.type === 'VariableDeclaration') {
          const variables = declaration as LazyVariableDeclaration;
          expect(['var', 'let', 'const'][raw.bytes[declarationPos + VARIABLE_KIND] ?? 3]).toBe(variables.kind);
          const declarators = raw.word(declarationPos + VARIABLE_DECLARATIONS);
          for (const [at, declarator] of variables.declarations.entries()) {
            const pos = declarators + at * DECLARATOR_SIZE;
            expect([raw.start(pos), raw.end(pos)]).toEqual([declarator.start, declarator.end]);
            const { init } = declarator;
            if (init?.type === 'ArrowFunctionExpression') {
              const arrowBody = (init as LazyNode & { body: LazyNode }).body;
              expect(raw.start(raw.boxed(raw.boxed(pos + DECLARATOR_INIT) + ARROW_BODY))).toBe(arrowBody.start);
            }
            if (init?.type === 'FunctionExpression') {
              expect(expressionType(raw, pos + DECLARATOR_INIT)).toBe('FunctionExpression');
              const fnBody = (init as LazyFunction).body;
              expect(raw.start(raw.word(raw.boxed(pos + DECLARATOR_INIT) + FUNCTION_BODY))).toBe(fnBody?.start);
            }
          }
        }
      }
      expect([...read].sort()).toEqual([
        'ClassDeclaration',
        'ExportAllDeclaration',
        'ExportDeclaration',
        'ExportFromDeclaration',
        'ExportNamedDeclaration',
        'ExpressionStatement',
        'FunctionDeclaration',
        'ImportDeclaration',
        'TSDeclareFunction',
        'TSEnumDeclaration',
        'TSInterfaceDeclaration',
        'TSTypeAliasDeclaration',
        'VariableDeclaration',
      ]);

      const imports = result.module.staticImports;
      const records = result.dataPos + MODULE_RECORD + STATIC_IMPORTS;
      expect(raw.word(records + 8)).toBe(imports.length);
      for (const [index, record] of imports.entries()) {
        const pos = raw.word(records) + index * STATIC_IMPORT_SIZE;
        expect(raw.start(pos)).toBe(record.start);
        expect([raw.start(pos + IMPORT_MODULE_REQUEST), raw.end(pos + IMPORT_MODULE_REQUEST)]).toEqual([
          record.moduleRequest.start,
          record.moduleRequest.end,
        ]);
        expect(raw.word(pos + IMPORT_ENTRIES + 8)).toBe(record.entries.length);
        for (const [at, entry] of record.entries.entries()) {
          const entryPos = raw.word(pos + IMPORT_ENTRIES) + at * IMPORT_ENTRY_SIZE;
          const tag = raw.bytes[entryPos + ENTRY_IMPORT_NAME];
          const imported = entry.importName;
          if (typeof imported === 'string') expect(tag).toBe(IMPORT_NAME_NAMESPACE);
          else if ('value' in imported) {
            expect(tag).toBe(IMPORT_NAME_NAMED);
            expect(raw.str(entryPos + ENTRY_IMPORT_NAME + 8 + NAME_SPAN_VALUE)).toBe(imported.value);
          } else expect([IMPORT_NAME_NAMED, IMPORT_NAME_NAMESPACE]).not.toContain(tag);
          expect(raw.str(entryPos + ENTRY_LOCAL_NAME + NAME_SPAN_VALUE)).toBe(entry.localName.value);
        }
      }
    } finally {
      result.dispose();
    }
  });
  it('reads export default, export =, export as namespace, namespaces, ambient modules and the decorators before export where the lazy nodes have them', async () => {
    const oxc = await api();
    // One `export default` (or `export =`) per source.
    const sources: [string, string][] = [
      [
        'src/ambient.ts',
        `declare namespace A.B.C { const x: number; }
declare module 'ext' { export function f(): void; }
declare module 'bare';
namespace Q {}
module M {}
export namespace N { export const y = 1; }
/** Doc. */ @first @second() export class Decorated {}
@only export default class DecoratedDefault {}`,
      ],
      ['src/umd.d.ts', 'export as namespace Lib;\nexport declare function f(): void;\n'],
      ['src/default-function.ts', 'export default function () {}'],
      ['src/default-named-function.ts', 'export default function named(): void {}'],
      ['src/default-overload.ts', 'export default function over(a: string): void;\nexport function x() {}'],
      ['src/default-class.ts', 'export default class {}'],
      ['src/default-interface.ts', 'export default interface I { x: number }'],
      ['src/default-class-expression.ts', 'export default (class {});'],
      ['src/default-identifier.ts', 'const x = 1;\nexport default x;'],
      ['src/default-arrow.ts', 'export default () => 1;'],
      ['src/default-function-expression.ts', 'export default (function () {});'],
      ['src/assign-identifier.ts', 'function k() {}\nexport = \\u006b;'],
      ['src/assign-class.ts', 'export = class Foo {};'],
      ['src/assign-function.ts', 'export = function () {};'],
      ['src/assign-arrow.ts', 'export = () => 1;'],
    ];
    const tags = new Map<number, string>([
      [STATEMENT.TSExternalModuleDeclaration, 'TSExternalModuleDeclaration'],
      [STATEMENT.TSNamespaceDeclaration, 'TSNamespaceDeclaration'],
      [STATEMENT.ExportDefaultDeclaration, 'ExportDefaultDeclaration'],
      [STATEMENT.TSExportAssignment, 'TSExportAssignment'],
      [STATEMENT.TSNamespaceExportDeclaration, 'TSNamespaceExportDeclaration'],
    ]);
    const defaultTypes = new Map<number, string[]>([
      [DEFAULT_DECLARATION.Function, ['FunctionDeclaration', 'TSDeclareFunction']],
      [DEFAULT_DECLARATION.Class, ['ClassDeclaration']],
      [DEFAULT_DECLARATION.TSInterfaceDeclaration, ['TSInterfaceDeclaration']],
    ]);
    type Named = LazyNode & { id: LazyNode; body: LazyNode | null };
    const read = new Set<string>();
    /** An expression field read as `exportValue` reads it: its tag (a class expression has its own), its node. */
    const expectExpression = (raw: RawView, field: number, node: LazyNode): void => {
      if (node.type === 'ClassExpression') expect(raw.bytes[field]).toBe(EXPRESSION.Class);
      else {
        expect(raw.bytes[field]).not.toBe(EXPRESSION.Class);
        expectTag(raw, field, node.type);
      }
      expect(raw.start(raw.boxed(field))).toBe(node.start);
      if (node.type === 'IdentifierReference')
        expect(raw.identifierName(raw.boxed(field))).toBe((node as LazyIdentifier).name);
      read.add(`expression ${node.type}`);
    };
    const expectDecorators = (raw: RawView, cls: number, node: LazyClass): void => {
      expect(raw.word(cls + CLASS_DECORATORS + 8)).toBe(node.decorators.length);
      const first = node.decorators[0];
      if (first !== undefined) {
        expect(raw.start(raw.word(cls + CLASS_DECORATORS))).toBe(first.start);
        read.add('decorators');
      }
    };
    for (const [path, source] of sources) {
      const lang = path.endsWith('.d.ts') ? 'dts' : 'ts';
      const result = oxc.parseSync(path, source, { lang, sourceType: 'module' });
      try {
        expect(result.errors, path).toHaveLength(0);
        const { raw } = result;
        const first = raw.word(result.programPos + PROGRAM_BODY);
        const spanAt = (at: number): number[] => [raw.start(at), raw.end(at)];
        for (const [index, node] of result.program.body.entries()) {
          const field = first + index * ENUM_FIELD_SIZE;
          const pos = raw.boxed(field);
          const tag = raw.bytes[field] ?? NO_ENUM;
          const type = tags.get(tag);
          if (type === undefined) {
            expect([...tags.values()], path).not.toContain(node.type);
            if (node.type === 'ExportDeclaration') {
              const { declaration } = node as LazyNode & { declaration: LazyNode };
              if (declaration.type === 'ClassDeclaration')
                expectDecorators(raw, raw.boxed(pos + EXPORT_DECLARATION), declaration as LazyClass);
              if (declaration.type === 'TSNamespaceDeclaration')
                expect(raw.bytes[pos + EXPORT_DECLARATION]).toBe(STATEMENT.TSNamespaceDeclaration);
            }
            continue;
          }
          expect(node.type, path).toBe(type);
          read.add(type);
          if (type === 'ExportDefaultDeclaration') {
            const { declaration } = node as LazyNode & { declaration: LazyNode };
            const at = pos + EXPORT_DEFAULT_DECLARATION;
            const declarationTypes = defaultTypes.get(raw.bytes[at] ?? NO_ENUM);
            if (declarationTypes === undefined) expectExpression(raw, at, declaration);
            else {
              expect(declarationTypes, path).toContain(declaration.type);
              expect(raw.start(raw.boxed(at))).toBe(declaration.start);
              read.add(`default ${declaration.type}`);
              if (declaration.type === 'ClassDeclaration')
                expectDecorators(raw, raw.boxed(at), declaration as LazyClass);
            }
          }
          if (type === 'TSExportAssignment')
            expectExpression(
              raw,
              pos + EXPORT_ASSIGNMENT_EXPRESSION,
              (node as LazyNode & { expression: LazyNode }).expression,
            );
          if (type === 'TSNamespaceExportDeclaration')
            expect(spanAt(pos + NAMESPACE_EXPORT_ID)).toEqual([(node as Named).id.start, (node as Named).id.end]);
          if (type === 'TSNamespaceDeclaration') {
            // Each nested declaration of `A.B.C`, down to its block.
            let inner = pos;
            let lazy = node as Named;
            for (;;) {
              expect(spanAt(inner + NAMESPACE_ID)).toEqual([lazy.id.start, lazy.id.end]);
              const body = lazy.body;
              if (body === null) throw new Error('a namespace without a body');
              expect(raw.start(raw.boxed(inner + NAMESPACE_BODY))).toBe(body.start);
              const nested = raw.bytes[inner + NAMESPACE_BODY] === NAMESPACE_BODY_NESTED;
              expect(nested).toBe(body.type === 'TSNamespaceDeclaration');
              if (!nested) break;
              read.add('nested namespace');
              inner = raw.boxed(inner + NAMESPACE_BODY);
              lazy = body as Named;
            }
          }
          if (type === 'TSExternalModuleDeclaration') {
            const { id, body } = node as Named;
            expect(spanAt(pos + MODULE_ID)).toEqual([id.start, id.end]);
            if (body === null) {
              expect([raw.word(pos + MODULE_BODY), raw.word(pos + MODULE_BODY + 4)]).toEqual([0, 0]);
              read.add('module without a body');
            } else expect(raw.start(raw.word(pos + MODULE_BODY))).toBe(body.start);
          }
        }
      } finally {
        result.dispose();
      }
    }
    expect([...read].sort()).toEqual([
      'ExportDefaultDeclaration',
      'TSExportAssignment',
      'TSExternalModuleDeclaration',
      'TSNamespaceDeclaration',
      'TSNamespaceExportDeclaration',
      'decorators',
      'default ClassDeclaration',
      'default FunctionDeclaration',
      'default TSDeclareFunction',
      'default TSInterfaceDeclaration',
      'expression ArrowFunctionExpression',
      'expression ClassExpression',
      'expression FunctionExpression',
      'expression IdentifierReference',
      'expression ParenthesizedExpression',
      'module without a body',
      'nested namespace',
    ]);
  });
});
