/**
 * Where the JavaScript/TypeScript extractor finds what it reads in oxc-parser's raw AST buffer
 * (pinned 0.159.0): the byte offsets that oxc's own lazy getters read
 * (`src-js/generated/lazy/constructors.js`), so a node read here builds no object. Positions
 * are byte offsets into the buffer; every node starts with its span, `start` and `end` as
 * 32-bit words at 0 and 4 (UTF-16 offsets into the source string). An enum field (an
 * `Expression`, a `Statement`, an `Argument`...) is 16 bytes: a tag byte, then the boxed node's
 * position as a 32-bit word at 8; an absent `Option` of one has the tag 255. A `Vec` is its
 * first element's position at 0 and its length at 8. A `Str` is its bytes' position at 0 and
 * its length in UTF-8 bytes at 8.
 *
 * `test/code/oxc-raw-layout.test.ts` reads a source through these and through oxc's lazy nodes
 * and compares: an oxc-parser upgrade that moves a field fails there.
 */
import type { RawBuffer } from './oxc-raw.js';

/** The oxc-parser version these offsets and tags are read from; `loadOxcRaw` takes no other. */
export const OXC_LAYOUT_VERSION = '0.159.0';

export const ENUM_FIELD_SIZE = 16;
export const NO_ENUM = 255;

/** Tags of `Expression` (shared by `Argument`, `ArrowFunctionBody`...). */
export const EXPRESSION = {
  StringLiteral: 5,
  IdentifierReference: 7,
  Super: 8,
  ArrowFunctionExpression: 10,
  AssignmentExpression: 11,
  CallExpression: 14,
  Class: 16,
  FunctionExpression: 18,
  ImportExpression: 19,
  ThisExpression: 26,
  StaticMemberExpression: 49,
  PrivateFieldExpression: 50,
} as const;

/** Tags of `Statement` (a `Declaration` keeps its tag inside `export`). */
export const STATEMENT = {
  ExpressionStatement: 6,
  VariableDeclaration: 32,
  Function: 33,
  Class: 34,
  TSTypeAliasDeclaration: 35,
  TSInterfaceDeclaration: 36,
  TSEnumDeclaration: 37,
  TSExternalModuleDeclaration: 38,
  TSNamespaceDeclaration: 39,
  ImportDeclaration: 64,
  ExportAllDeclaration: 65,
  ExportDefaultDeclaration: 66,
  ExportDeclaration: 67,
  ExportNamedDeclaration: 68,
  ExportFromDeclaration: 69,
  TSExportAssignment: 70,
  TSNamespaceExportDeclaration: 71,
} as const;

/** Tags of `ExportDefaultDeclarationKind` beyond the `Expression` ones it shares (a class or a function there is an expression). */
export const DEFAULT_DECLARATION = { Function: 64, Class: 65, TSInterfaceDeclaration: 66 } as const;

/** Field offsets by node. */
export const PROGRAM_BODY = 112; // Program: `body`, a Vec of Statements
export const CALL_CALLEE = 16; // CallExpression, NewExpression: `callee`
export const CALL_ARGUMENTS = 40; // CallExpression: `arguments` (a Vec of Arguments)
export const MEMBER_OBJECT = 16; // StaticMemberExpression, PrivateFieldExpression: `object`
export const MEMBER_PROPERTY = 32; // ...: `property`, an IdentifierName or PrivateIdentifier held inline
export const TAG = 16; // TaggedTemplateExpression: `tag`
export const IMPORT_SOURCE = 16; // ImportExpression: `source`
export const IDENTIFIER_NAME = 16; // IdentifierReference, BindingIdentifier: `name`, a Str
export const EXPORT_DECLARATION = 16; // ExportDeclaration: `declaration`
export const EXPORT_DEFAULT_DECLARATION = 16; // ExportDefaultDeclaration: `declaration`, an ExportDefaultDeclarationKind
export const EXPORT_ASSIGNMENT_EXPRESSION = 16; // TSExportAssignment: `expression`
export const NAMESPACE_EXPORT_ID = 16; // TSNamespaceExportDeclaration: `id`, an inline IdentifierName
export const NAMESPACE_ID = 16; // TSNamespaceDeclaration: `id`, an inline BindingIdentifier
export const NAMESPACE_BODY = 48; // TSNamespaceDeclaration: `body`, a tag (0: a nested TSNamespaceDeclaration, 1: a TSModuleBlock) and its box
export const NAMESPACE_BODY_NESTED = 0;
export const MODULE_ID = 16; // TSExternalModuleDeclaration: `id`, an inline StringLiteral (quotes included)
export const MODULE_BODY = 64; // TSExternalModuleDeclaration: `body`, an Option<Box<TSModuleBlock>> (absent: 0)
export const FUNCTION_ID = 16; // Function: `id`, an inline Option<BindingIdentifier> (absent: its name's position is 0)
export const FUNCTION_BODY = 80; // Function: `body`, an Option<Box<FunctionBody>> (absent: 0)
export const STATEMENT_EXPRESSION = 16; // ExpressionStatement: `expression`
export const ASSIGNMENT_OPERATOR = 12; // AssignmentExpression: `operator` (0: `=`)
export const ASSIGN = 0;
export const ASSIGNMENT_LEFT = 16; // AssignmentExpression: `left`, an AssignmentTarget (an enum field)
export const ASSIGNMENT_RIGHT = 32; // AssignmentExpression: `right`
export const EXPORT_SPECIFIERS = 16; // ExportNamedDeclaration, ExportFromDeclaration: `specifiers`, a Vec of ExportSpecifiers
export const EXPORT_SPECIFIER_SIZE = 128;
/** ExportSpecifier: `local` and `exported`, each a ModuleExportName: a tag, then its node inline at 8. */
export const SPECIFIER_LOCAL = 16;
export const SPECIFIER_EXPORTED = 72;
export const EXPORT_FROM_SOURCE = 40; // ExportFromDeclaration: `source`, an inline StringLiteral
export const EXPORT_ALL_EXPORTED = 16; // ExportAllDeclaration: `exported`, an Option<ModuleExportName>
export const EXPORT_ALL_SOURCE = 72; // ExportAllDeclaration: `source`, an inline StringLiteral
export const CLASS_DECORATORS = 16; // Class: `decorators`, a Vec of inline Decorators
export const DECORATOR_SIZE = 32;
export const CLASS_ID = 40; // Class: `id`, an inline Option<BindingIdentifier>
export const CLASS_BODY = 128; // Class: `body`, a Box<ClassBody>
export const CLASS_ELEMENTS = 16; // ClassBody: `body`, a Vec of ClassElements (enum fields)
/** Tags of `ClassElement`. */
export const CLASS_ELEMENT = { MethodDefinition: 1, PropertyDefinition: 2, AccessorProperty: 3 } as const;
export const MEMBER_DECORATORS = 16; // MethodDefinition, PropertyDefinition, AccessorProperty: `decorators`
export const MEMBER_KEY = 40; // ...: `key`, a PropertyKey (an enum field)
export const METHOD_VALUE = 56; // MethodDefinition: `value`, a Box<Function>
export const METHOD_COMPUTED = 14; // MethodDefinition: `computed`, a byte
export const PROPERTY_VALUE = 64; // PropertyDefinition, AccessorProperty: `value`, an Option<Expression>
export const PROPERTY_COMPUTED = 13; // PropertyDefinition, AccessorProperty: `computed`, a byte
export const DECLARATION_ID = 16; // TSInterfaceDeclaration, TSTypeAliasDeclaration, TSEnumDeclaration: `id`, an inline BindingIdentifier
export const INTERFACE_BODY = 80; // TSInterfaceDeclaration: `body`, a Box<TSInterfaceBody>
export const ENUM_BODY = 48; // TSEnumDeclaration: `body`, an inline TSEnumBody
export const ARROW_BODY = 40; // ArrowFunctionExpression: `body`, an enum field
export const VARIABLE_KIND = 12; // VariableDeclaration: `kind` (0 var, 1 let, 2 const, 3 using, 4 await using)
export const VARIABLE_DECLARATIONS = 16; // VariableDeclaration: `declarations`, a Vec of inline VariableDeclarators
export const DECLARATOR_SIZE = 56;
export const DECLARATOR_ID = 16; // VariableDeclarator: `id`, a BindingPattern (tag 0: BindingIdentifier)
export const DECLARATOR_INIT = 40; // VariableDeclarator: `init`, an Option<Expression>
export const BINDING_IDENTIFIER = 0;
export const VARIABLE_KIND_LET = 1;
export const VARIABLE_KIND_CONST = 2;
/** The parse errors (a Vec), from the start of `RawTransferData`. */
export const ERRORS = 272;
/** The module record (`EcmaScriptModule`), from the start of `RawTransferData`. */
export const MODULE_RECORD = 168;
export const STATIC_IMPORTS = 0; // EcmaScriptModule: `staticImports`, a Vec of StaticImports
export const STATIC_IMPORT_SIZE = 56;
export const IMPORT_MODULE_REQUEST = 8; // StaticImport: `moduleRequest`, a NameSpan (start, end)
export const IMPORT_ENTRIES = 32; // StaticImport: `entries`, a Vec of ImportEntries
export const IMPORT_ENTRY_SIZE = 96;
export const ENTRY_IMPORT_NAME = 32; // ImportEntry: `importName` (tag 0: a NameSpan at 8; 1: namespace; 2: default)
export const ENTRY_LOCAL_NAME = 64; // ImportEntry: `localName`, a NameSpan
export const NAME_SPAN_VALUE = 8; // NameSpan: `value`, a Str
export const IMPORT_NAME_NAMED = 0;
export const IMPORT_NAME_NAMESPACE = 1;

const utf8 = new TextDecoder();

/** A parsed file's buffer, as its readers need it. */
export class RawView {
  readonly bytes: RawBuffer;
  readonly words: Int32Array;

  constructor(
    buffer: RawBuffer,
    readonly text: string,
    /** Where the source's UTF-8 copy starts in the buffer, and whether it is ASCII (a `Str` into it is then a slice of `text`). */
    readonly sourceStartPos: number,
    private readonly sourceIsAscii: boolean,
  ) {
    this.bytes = buffer;
    this.words = buffer.int32;
  }

  word(pos: number): number {
    return this.words[pos >> 2] ?? 0;
  }

  start(node: number): number {
    return this.words[node >> 2] ?? 0;
  }

  end(node: number): number {
    return this.words[(node + 4) >> 2] ?? 0;
  }

  /** The boxed node of the enum field at `field`. */
  boxed(field: number): number {
    return this.words[(field + 8) >> 2] ?? 0;
  }

  /** A `Str` at `pos`, as oxc's lazy nodes read it. */
  str(pos: number): string {
    const at = this.word(pos);
    const length = this.word(pos + 8);
    if (length === 0) return '';
    if (this.sourceIsAscii && at >= this.sourceStartPos) return this.text.substr(at - this.sourceStartPos, length);
    return utf8.decode(this.bytes.subarray(at, at + length));
  }

  /** An identifier's name: its source text, unless that holds an escape (`\u0061`), when oxc's unescaped name. */
  identifierName(node: number): string {
    const source = this.text.slice(this.start(node), this.end(node));
    return source.includes('\\') ? this.str(node + IDENTIFIER_NAME) : source;
  }
}
