/**
 * Symbols, imports, exports and calls of TypeScript, TSX and JavaScript files (ES modules and
 * the common CommonJS shapes: `require('x')`, `exports.name =`, `module.exports =`).
 */
import type { Node } from 'web-tree-sitter';
import {
  FileFacts,
  compactSignature,
  forEachCall,
  withLeadingDocs,
  stringValue,
  type SymbolInput,
} from './extract-shared.js';
import type { LanguageExtractor } from './language-extractor.js';
import type { SymbolKind } from './types.js';

/** Call sites: plain calls, member calls, `new X()`, and dynamic `import()`. */
const CALL_QUERY = `
(call_expression function: (identifier) @callee)
(call_expression function: (member_expression) @member)
(call_expression function: (import) @callee)
(new_expression constructor: (identifier) @callee)
`;
/** `receiver.name` with a plain receiver; anything else keeps only the name. */
const PLAIN_MEMBER = /^(?:[A-Za-z_$][\w$]*|this)\??\.#?[A-Za-z_$][\w$]*$/;

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);
/** Methods whose first string arguments define command-line flags (commander, yargs). */
const CLI_METHODS = new Set(['option', 'requiredOption']);

export const javascriptExtractor: LanguageExtractor = {
  callQuery: CALL_QUERY,
  extract(root, text, callQuery, facts) {
    const walker = new TopLevelWalker(text, facts);
    for (const [node, doc] of withLeadingDocs(root.namedChildren, text)) walker.statement(node, doc);
    walker.resolveLocalExports();
    if (callQuery === undefined) return;
    // One capture per call (the member expression's text is split here) keeps query results,
    // the costliest part of extraction, small.
    forEachCall(callQuery, root, ({ callee, member }) => {
      if (callee !== undefined) {
        if (callee.type === 'import') return dynamicImport(callee, facts);
        const name = callee.text;
        if (name === 'require') return dynamicImport(callee, facts);
        facts.addCall(callee.startIndex, name);
      } else if (member !== undefined) {
        const text = member.text;
        if (PLAIN_MEMBER.test(text)) {
          const plain = text.replace('?.', '.');
          facts.addCall(member.startIndex, plain);
          if (CLI_METHODS.has(plain.slice(plain.indexOf('.') + 1))) cliOption(member, facts);
        } else {
          const name = text.slice(text.lastIndexOf('.') + 1).trim();
          facts.addCall(member.startIndex, `.${name}`);
          if (CLI_METHODS.has(name)) cliOption(member, facts);
        }
      }
    });
  },
};

/**
 * `require('x')` / `import('x')`: an import when the first argument is a string literal; in
 * `const name = require('x')`, `name` is the namespace the module is used through.
 */
function dynamicImport(callee: Node, facts: FileFacts): void {
  const call = callee.parent;
  const first = call?.childForFieldName('arguments')?.namedChild(0);
  if (first?.type !== 'string') return;
  const declarator = call?.parent;
  const binding = declarator?.type === 'variable_declarator' ? declarator.childForFieldName('name') : null;
  const namespace = binding?.type === 'identifier' ? binding.text : undefined;
  facts.addImport({
    specifier: stringValue(first),
    names: [],
    line: first.startPosition.row + 1,
    ...(namespace === undefined ? {} : { namespace }),
  });
}

function cliOption(member: Node, facts: FileFacts): void {
  const call = member.parent;
  const first = call?.childForFieldName('arguments')?.namedChild(0);
  if (first?.type === 'string') facts.addCliFlags(stringValue(first));
}

class TopLevelWalker {
  /** `export { a as b }` without a source: resolved once every declaration is known. */
  private readonly localExports: { name: string; local: string }[] = [];

  constructor(
    private readonly text: string,
    private readonly facts: FileFacts,
  ) {}

  statement(node: Node, doc: string | undefined): void {
    switch (node.type) {
      case 'import_statement':
        return this.importStatement(node);
      case 'export_statement':
        return this.exportStatement(node, doc);
      case 'expression_statement':
        return this.commonJsExport(node);
      default:
        this.declaration(node, false, doc);
    }
  }

  resolveLocalExports(): void {
    for (const { name, local } of this.localExports) {
      const kind = this.facts.markExported(local) ?? 'variable';
      this.facts.addExport(local === name ? { name, kind } : { name, kind, local });
    }
  }

  private importStatement(node: Node): void {
    const source = node.childForFieldName('source');
    if (source === null) return;
    const names: string[] = [];
    let namespace: string | undefined;
    for (const child of node.namedChildren) {
      if (child.type !== 'import_clause') continue;
      for (const part of child.namedChildren) {
        if (part.type === 'identifier') names.push('default');
        else if (part.type === 'namespace_import') {
          names.push('*');
          namespace = part.namedChild(0)?.text;
        } else if (part.type === 'named_imports') {
          for (const specifier of part.namedChildren) {
            const name = specifier.childForFieldName('name')?.text;
            if (name !== undefined) names.push(name);
          }
        }
      }
    }
    const line = node.startPosition.row + 1;
    this.facts.addImport({ specifier: stringValue(source), names, line, ...(namespace ? { namespace } : {}) });
  }

  private exportStatement(node: Node, doc: string | undefined): void {
    const source = node.childForFieldName('source');
    const declaration = node.childForFieldName('declaration');
    const isDefault = this.text.startsWith('export default', node.startIndex);
    if (declaration !== null) {
      const names = this.declaration(declaration, true, doc, isDefault ? 'default' : undefined);
      for (const { name, kind } of names) {
        this.facts.addExport(isDefault && name !== 'default' ? { name: 'default', kind, local: name } : { name, kind });
      }
      return;
    }
    if (source !== null) return this.reexport(node, stringValue(source));
    const clause = node.namedChildren.find((child) => child.type === 'export_clause');
    if (clause !== undefined) {
      for (const specifier of clause.namedChildren) {
        const local = specifier.childForFieldName('name')?.text;
        if (local === undefined) continue;
        this.localExports.push({ name: specifier.childForFieldName('alias')?.text ?? local, local });
      }
      return;
    }
    // `export default <expression>` and `export = <expression>`.
    const value = node.childForFieldName('value') ?? node.namedChildren.find((child) => child.type !== 'comment');
    if (value === undefined) return;
    if (value.type === 'identifier') this.localExports.push({ name: 'default', local: value.text });
    else {
      const kind: SymbolKind = FUNCTION_VALUES.has(value.type)
        ? 'function'
        : value.type === 'class'
          ? 'class'
          : 'variable';
      this.facts.addExport({ name: 'default', kind });
    }
  }

  private reexport(node: Node, specifier: string): void {
    const line = node.startPosition.row + 1;
    const names: string[] = [];
    let sawClause = false;
    for (const child of node.namedChildren) {
      if (child.type === 'export_clause') {
        sawClause = true;
        for (const part of child.namedChildren) {
          const local = part.childForFieldName('name')?.text;
          if (local === undefined) continue;
          const name = part.childForFieldName('alias')?.text ?? local;
          names.push(local);
          this.facts.addExport(
            name === local
              ? { name, kind: 'reexport', source: specifier }
              : { name, kind: 'reexport', local, source: specifier },
          );
        }
      } else if (child.type === 'namespace_export') {
        sawClause = true;
        names.push('*');
        const name = child.namedChild(0)?.text ?? '*';
        this.facts.addExport({ name, kind: 'reexport', source: specifier });
      }
    }
    if (!sawClause) {
      names.push('*');
      this.facts.addExport({ name: '*', kind: 'reexport', source: specifier });
    }
    this.facts.addImport({ specifier, names, line });
  }

  /** `exports.name = ...`, `module.exports.name = ...`, `module.exports = ...`. */
  private commonJsExport(node: Node): void {
    const start = node.startIndex;
    if (!this.text.startsWith('exports.', start) && !this.text.startsWith('module.exports', start)) return;
    const assignment = node.namedChild(0);
    if (assignment?.type !== 'assignment_expression') return;
    const left = assignment.childForFieldName('left')?.text ?? '';
    const right = assignment.childForFieldName('right');
    const kind: SymbolKind = right !== null && FUNCTION_VALUES.has(right.type) ? 'function' : 'variable';
    const match = /^(?:module\.)?exports(?:\.([\w$]+))?$/.exec(left);
    if (match === null) return;
    const name = match[1] ?? 'default';
    const signature = compactSignature(this.text, start, right?.startIndex ?? node.endIndex);
    this.facts.addSymbol({ name, kind, exported: true, node, signature });
    this.facts.addExport({ name, kind });
  }

  /** Records the symbols a declaration introduces and returns their names and kinds. */
  declaration(
    node: Node,
    exported: boolean,
    doc: string | undefined,
    anonymousName?: string,
  ): { name: string; kind: SymbolKind }[] {
    const add = (input: Omit<SymbolInput, 'exported' | 'doc'>): { name: string; kind: SymbolKind }[] => {
      this.facts.addSymbol({ ...input, exported, doc });
      return [{ name: input.name, kind: input.kind }];
    };
    const named = (): string | undefined => node.childForFieldName('name')?.text ?? anonymousName;
    switch (node.type) {
      case 'function_declaration':
      case 'generator_function_declaration':
      case 'function_signature':
      case 'function_expression':
      case 'function':
      case 'generator_function':
      case 'arrow_function': {
        const name = named();
        if (name === undefined) return [];
        return add({ name, kind: 'function', node, signature: this.upToBody(node) });
      }
      case 'class_declaration':
      case 'abstract_class_declaration':
      case 'class': {
        const name = named();
        if (name === undefined) return [];
        const result = add({ name, kind: 'class', node, signature: this.upToBody(node) });
        this.classMembers(node, name, exported);
        return result;
      }
      case 'interface_declaration': {
        const name = named();
        return name === undefined ? [] : add({ name, kind: 'interface', node, signature: this.upToBody(node) });
      }
      case 'type_alias_declaration':
      case 'enum_declaration': {
        const name = named();
        const signature =
          node.type === 'enum_declaration'
            ? this.upToBody(node)
            : compactSignature(this.text, node.startIndex, node.endIndex);
        return name === undefined ? [] : add({ name, kind: 'type', node, signature });
      }
      case 'internal_module':
      case 'module': {
        const name = named();
        return name === undefined ? [] : add({ name, kind: 'variable', node, signature: this.upToBody(node) });
      }
      case 'lexical_declaration':
      case 'variable_declaration':
        return this.variables(node, exported, doc);
      case 'ambient_declaration': {
        const inner = node.namedChildren.find((child) => child.type !== 'comment');
        return inner === undefined ? [] : this.declaration(inner, exported, doc, anonymousName);
      }
      default:
        if (anonymousName !== undefined && node.type !== 'identifier') {
          return add({
            name: anonymousName,
            kind: 'variable',
            node,
            signature: compactSignature(this.text, node.startIndex, node.endIndex),
          });
        }
        return [];
    }
  }

  private variables(node: Node, exported: boolean, doc: string | undefined): { name: string; kind: SymbolKind }[] {
    const keyword = this.text.startsWith('const', node.startIndex)
      ? 'const'
      : this.text.startsWith('let', node.startIndex)
        ? 'let'
        : 'var';
    const result: { name: string; kind: SymbolKind }[] = [];
    for (const declarator of node.namedChildren) {
      if (declarator.type !== 'variable_declarator') continue;
      const nameNode = declarator.childForFieldName('name');
      if (nameNode?.type !== 'identifier') continue;
      const name = nameNode.text;
      const value = declarator.childForFieldName('value');
      const isFunction = value !== null && FUNCTION_VALUES.has(value.type);
      const kind: SymbolKind = isFunction ? 'function' : keyword === 'const' ? 'const' : 'variable';
      const signature = isFunction
        ? `${keyword} ${compactSignature(this.text, declarator.startIndex, this.bodyStart(value))}`
        : `${keyword} ${compactSignature(this.text, declarator.startIndex, value?.startIndex ?? declarator.endIndex)}`;
      this.facts.addSymbol({ name, kind, exported, node: declarator, signature, doc });
      result.push({ name, kind });
    }
    return result;
  }

  private classMembers(node: Node, container: string, exported: boolean): void {
    const body = node.childForFieldName('body');
    if (body === null) return;
    for (const [member, doc] of withLeadingDocs(body.namedChildren, this.text)) {
      const isMethod =
        member.type === 'method_definition' ||
        member.type === 'method_signature' ||
        member.type === 'abstract_method_signature';
      const value = member.type === 'public_field_definition' ? member.childForFieldName('value') : null;
      if (!isMethod && !(value !== null && FUNCTION_VALUES.has(value.type))) continue;
      const nameNode = member.childForFieldName('name') ?? member.childForFieldName('property');
      if (nameNode === null) continue;
      const name = nameNode.text;
      const signature = compactSignature(this.text, member.startIndex, this.bodyStart(value ?? member));
      const isPrivate =
        name.startsWith('#') || /^(?:\S+\s+)*private\s/.test(signature.slice(0, signature.indexOf(name)));
      this.facts.addSymbol({
        name,
        kind: 'method',
        container,
        exported: exported && !isPrivate,
        node: member,
        signature,
        doc,
      });
    }
  }

  private upToBody(node: Node): string {
    return compactSignature(this.text, node.startIndex, this.bodyStart(node));
  }

  private bodyStart(node: Node): number {
    const body = node.childForFieldName('body');
    // An arrow function with an expression body keeps `=>`: cut there instead of at the body.
    return body?.startIndex ?? node.endIndex;
  }
}
