/**
 * JavaScript and TypeScript extraction with oxc-parser's raw AST buffer: the top level from the
 * program's statements and the module record (see `oxc-declarations.ts`), calls and dynamic
 * imports from one walk of the buffer (oxc's own walker, made to build no node objects, see
 * `oxc-raw-walk.generated.ts`), whose visitors read the few fields they need at the offsets in
 * `oxc-raw-layout.ts`. Measured on 6,000 files of `node_modules`, this is several times cheaper
 * than tree-sitter with the same output (see bench/index.ts): oxc parses natively, and no node
 * of the walk becomes an object.
 *
 * A file oxc reports any error for is left to tree-sitter (`extract` returns undefined): oxc
 * stops at the first syntax error with an empty program, while tree-sitter recovers, so a file
 * in the middle of an edit keeps its symbols.
 */
import { extname } from 'node:path';
import type { LanguageId } from '../tree-sitter.js';
import { FileFacts } from './extract-shared.js';
import { LineTable } from './line-table.js';
import { OxcDeclarations } from './oxc-declarations.js';
import type { OxcRawApi, RawParseOptions, RawVisitors } from './oxc-raw.js';
import {
  BINDING_IDENTIFIER,
  CALL_ARGUMENTS,
  CALL_CALLEE,
  DECLARATOR_ID,
  DECLARATOR_INIT,
  ENUM_FIELD_SIZE,
  ERRORS,
  EXPRESSION,
  IMPORT_SOURCE,
  MEMBER_OBJECT,
  MEMBER_PROPERTY,
  TAG,
  type RawView,
} from './oxc-raw-layout.js';
import type { FileParseResult } from './types.js';

/** Methods whose first string argument defines command-line flags (commander, yargs). */
const CLI_METHODS: ReadonlySet<string> = new Set(['option', 'requiredOption']);

/** What the visitors read while they walk one file. */
interface CurrentFile {
  raw: RawView;
  lines: LineTable;
  facts: FileFacts;
  /**
   * The call or `import()` that initialises a variable declared just before: its start, and the
   * position of the variable's identifier (its name is read only when an import needs it); -1 for none.
   */
  declaredStart: number;
  declaredId: number;
}

export class OxcExtractor {
  /** Calls, dynamic imports, and the variable declarations that may bind them. */
  private readonly visitors: RawVisitors;
  private current: CurrentFile | undefined;

  constructor(private readonly oxc: OxcRawApi) {
    // A declarator costs no object here: every file's are visited, for `x = require(...)`.
    this.visitors = oxc.rawVisitors({
      CallExpression: (pos: number) => this.call(pos),
      NewExpression: (pos: number) => this.construct(pos),
      // A tagged template calls its tag (tree-sitter's grammar parses it as a call, too).
      TaggedTemplateExpression: (pos: number) => this.tag(pos),
      ImportExpression: (pos: number) => this.dynamicImport(pos, pos + IMPORT_SOURCE),
      VariableDeclarator: (pos: number) => this.declarator(pos),
    });
  }

  /** Parse results for a file of one of the JavaScript languages; undefined when oxc reports an error. */
  extract(path: string, text: string, language: LanguageId, lineTable?: LineTable): FileParseResult | undefined {
    const declarationFile = /\.d\.[cm]?ts$/.test(path);
    const result = this.oxc.parseSync(path, text, parseOptions(path, language, declarationFile));
    try {
      const { raw } = result;
      if (raw.word(result.dataPos + ERRORS + 8) > 0) return undefined;
      const facts = new FileFacts();
      const lines = lineTable ?? new LineTable(text);
      new OxcDeclarations(raw, lines, facts).program(result.programPos, result.dataPos);
      // Declaration files hold no calls.
      if (!declarationFile) {
        this.current = { raw, lines, facts, declaredStart: -1, declaredId: -1 };
        try {
          result.walkRaw(this.visitors);
        } finally {
          this.current = undefined;
        }
      }
      return facts.finish({ language, hasErrors: false });
    } finally {
      result.dispose();
    }
  }

  private call(pos: number): void {
    const file = this.current;
    if (file === undefined) return;
    const { raw } = file;
    const callee = raw.boxed(pos + CALL_CALLEE);
    switch (raw.bytes[pos + CALL_CALLEE]) {
      case EXPRESSION.IdentifierReference: {
        const name = raw.identifierName(callee);
        if (name === 'require') this.dynamicImport(pos, argumentAt(raw, pos, 0));
        else {
          file.declaredStart = -1;
          file.facts.addCall(raw.start(callee), name);
        }
        return;
      }
      case EXPRESSION.StaticMemberExpression:
      case EXPRESSION.PrivateFieldExpression:
        file.declaredStart = -1;
        return this.memberCall(file, pos, callee);
      default:
        file.declaredStart = -1;
    }
  }

  /** `receiver.name(...)`, `receiver?.name(...)`, `this.#name(...)`; `.name` for any other receiver. */
  private memberCall(file: CurrentFile, call: number | undefined, member: number): void {
    const { raw } = file;
    const { text } = raw;
    const property = member + MEMBER_PROPERTY;
    const propertyStart = raw.start(property);
    const name = text.slice(propertyStart, raw.end(property));
    let receiver: string | undefined;
    const objectTag = raw.bytes[member + MEMBER_OBJECT];
    if (
      objectTag === EXPRESSION.IdentifierReference ||
      objectTag === EXPRESSION.ThisExpression ||
      objectTag === EXPRESSION.Super
    ) {
      const object = raw.boxed(member + MEMBER_OBJECT);
      const objectEnd = raw.end(object);
      // Only `.` or `?.` between them, as the tree-sitter extractor required of the member's text.
      const between = text.slice(objectEnd, propertyStart);
      if (between === '.' || between === '?.') receiver = text.slice(raw.start(object), objectEnd);
    }
    file.facts.addCall(raw.start(member), receiver === undefined ? `.${name}` : `${receiver}.${name}`);
    if (call !== undefined && CLI_METHODS.has(name)) {
      const first = argumentAt(raw, call, 0);
      if (first !== undefined && raw.bytes[first] === EXPRESSION.StringLiteral) {
        const literal = raw.boxed(first);
        file.facts.addCliFlags(text.slice(raw.start(literal) + 1, raw.end(literal) - 1));
      }
    }
  }

  private tag(pos: number): void {
    const file = this.current;
    if (file === undefined) return;
    const { raw } = file;
    const tag = raw.boxed(pos + TAG);
    switch (raw.bytes[pos + TAG]) {
      case EXPRESSION.IdentifierReference:
        return file.facts.addCall(raw.start(tag), raw.identifierName(tag));
      case EXPRESSION.StaticMemberExpression:
      case EXPRESSION.PrivateFieldExpression:
        return this.memberCall(file, undefined, tag);
    }
  }

  private construct(pos: number): void {
    const file = this.current;
    if (file === undefined) return;
    const { raw } = file;
    if (raw.bytes[pos + CALL_CALLEE] !== EXPRESSION.IdentifierReference) return;
    const callee = raw.boxed(pos + CALL_CALLEE);
    file.facts.addCall(raw.start(callee), raw.identifierName(callee));
  }

  /**
   * `require('x')` / `import('x')` at `pos`, its argument the enum field at `argument`: an import
   * when that is a string literal; in `const name = require('x')`, `name` is the namespace the
   * module is used through.
   */
  private dynamicImport(pos: number, argument: number | undefined): void {
    const file = this.current;
    if (file === undefined) return;
    const { declaredStart } = file;
    file.declaredStart = -1;
    const { raw } = file;
    if (argument === undefined || raw.bytes[argument] !== EXPRESSION.StringLiteral) return;
    const literal = raw.boxed(argument);
    const start = raw.start(literal);
    const namespace =
      declaredStart !== -1 && declaredStart === raw.start(pos) ? raw.identifierName(file.declaredId) : undefined;
    file.facts.addImport({
      specifier: raw.text.slice(start + 1, raw.end(literal) - 1),
      names: [],
      line: file.lines.line(start),
      ...(namespace === undefined ? {} : { namespace }),
    });
  }

  /**
   * The walk enters a declarator before its initialiser: remember `const name = <call>` so the
   * call, visited next, knows the variable it initialises.
   */
  private declarator(pos: number): void {
    const file = this.current;
    if (file === undefined) return;
    const { raw } = file;
    file.declaredStart = -1;
    const initTag = raw.bytes[pos + DECLARATOR_INIT];
    if (initTag !== EXPRESSION.CallExpression && initTag !== EXPRESSION.ImportExpression) return;
    if (raw.bytes[pos + DECLARATOR_ID] !== BINDING_IDENTIFIER) return;
    file.declaredStart = raw.start(raw.boxed(pos + DECLARATOR_INIT));
    file.declaredId = raw.boxed(pos + DECLARATOR_ID);
  }
}

/** The position of a call's argument `index` (an `Argument` field), or undefined. */
function argumentAt(raw: RawView, call: number, index: number): number | undefined {
  const vector = call + CALL_ARGUMENTS;
  if (index >= raw.word(vector + 8)) return undefined;
  return raw.word(vector) + index * ENUM_FIELD_SIZE;
}

/**
 * oxc's dialect for a file: JSX is allowed in every JavaScript file (`.js` React components are
 * common, and oxc rejects JSX in a plain `js` file), `.mjs`/`.cjs` fix the module kind.
 */
function parseOptions(path: string, language: LanguageId, declarationFile: boolean): RawParseOptions {
  const extension = extname(path).toLowerCase();
  const sourceType =
    extension === '.mjs' || extension === '.mts'
      ? 'module'
      : extension === '.cjs' || extension === '.cts'
        ? 'commonjs'
        : 'unambiguous';
  const lang = declarationFile ? 'dts' : language === 'tsx' ? 'tsx' : language === 'javascript' ? 'jsx' : 'ts';
  return { lang, sourceType: lang === 'dts' ? 'module' : sourceType };
}
