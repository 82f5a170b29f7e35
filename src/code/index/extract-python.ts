/**
 * Symbols, imports, exports and calls of Python files. The public API of a module is `__all__`
 * when it is a literal list or tuple of strings, else every top-level name without a leading
 * underscore. Imports are found anywhere (function-local imports are dependencies too).
 */
import type { Node } from 'web-tree-sitter';
import { FileFacts, cleanDoc, compactSignature, forEachCall, stringValue } from './extract-shared.js';
import type { LanguageExtractor } from './language-extractor.js';

const CALL_QUERY = `
(call function: (identifier) @callee)
(call function: (attribute) @member)
(import_statement) @import
(import_from_statement) @import
`;

export const pythonExtractor: LanguageExtractor = {
  callQuery: CALL_QUERY,
  extract(root, text, callQuery, facts) {
    let all: string[] | undefined;
    for (const statement of root.namedChildren) {
      const node =
        statement.type === 'decorated_definition'
          ? (statement.childForFieldName('definition') ?? statement)
          : statement;
      if (node.type === 'function_definition') {
        const name = node.childForFieldName('name')?.text;
        if (name === undefined) continue;
        facts.addSymbol({
          name,
          kind: 'function',
          exported: isPublic(name),
          node: statement,
          signature: upToBody(text, node),
          doc: docstring(node),
        });
      } else if (node.type === 'class_definition') {
        classDefinition(text, statement, node, facts);
      } else if (node.type === 'expression_statement') {
        const names = assignment(text, node, facts);
        if (names !== undefined) all = names;
      }
    }
    if (all !== undefined) {
      for (const symbol of facts.symbols) if (symbol.container === undefined) symbol.exported = false;
      for (const name of all) facts.addExport({ name, kind: facts.markExported(name) ?? 'variable' });
    } else {
      for (const symbol of facts.symbols) {
        if (symbol.container === undefined && symbol.exported)
          facts.addExport({ name: symbol.name, kind: symbol.kind });
      }
    }
    if (callQuery === undefined) return;
    forEachCall(callQuery, root, ({ callee, member, import: statement }) => {
      if (statement !== undefined) return importStatement(statement, facts);
      if (callee !== undefined) return facts.addCall(callee.startIndex, callee.text);
      if (member === undefined) return;
      // `receiver.name` with a plain receiver; anything else keeps only the name.
      const text = member.text;
      const name = text.slice(text.lastIndexOf('.') + 1).trim();
      if (name === 'add_argument') argparseFlags(member, facts);
      facts.addCall(member.startIndex, /^[A-Za-z_]\w*\.\w+$/.test(text) ? text : `.${name}`);
    });
  },
};

function isPublic(name: string): boolean {
  return !name.startsWith('_');
}

function upToBody(text: string, node: Node): string {
  return compactSignature(text, node.startIndex, node.childForFieldName('body')?.startIndex ?? node.endIndex);
}

function docstring(node: Node): string | undefined {
  const first = node.childForFieldName('body')?.namedChild(0);
  if (first?.type !== 'expression_statement') return undefined;
  const literal = first.namedChild(0);
  return literal?.type === 'string' ? cleanDoc(stringValue(literal)) : undefined;
}

function classDefinition(text: string, statement: Node, node: Node, facts: FileFacts): void {
  const name = node.childForFieldName('name')?.text;
  if (name === undefined) return;
  const exported = isPublic(name);
  facts.addSymbol({
    name,
    kind: 'class',
    exported,
    node: statement,
    signature: upToBody(text, node),
    doc: docstring(node),
  });
  for (const member of node.childForFieldName('body')?.namedChildren ?? []) {
    const method = member.type === 'decorated_definition' ? member.childForFieldName('definition') : member;
    if (method?.type !== 'function_definition') continue;
    const methodName = method.childForFieldName('name')?.text;
    if (methodName === undefined) continue;
    const dunder = methodName.startsWith('__') && methodName.endsWith('__');
    facts.addSymbol({
      name: methodName,
      kind: 'method',
      container: name,
      exported: exported && (dunder || isPublic(methodName)),
      node: member,
      signature: upToBody(text, method),
      doc: docstring(method),
    });
  }
}

/** A top-level `NAME = ...` / `NAME: T = ...`; returns the names of a literal `__all__`. */
function assignment(text: string, statement: Node, facts: FileFacts): string[] | undefined {
  const node = statement.namedChild(0);
  if (node?.type !== 'assignment') return undefined;
  const left = node.childForFieldName('left');
  if (left?.type !== 'identifier') return undefined;
  const name = left.text;
  const right = node.childForFieldName('right');
  if (name === '__all__') {
    if (right?.type !== 'list' && right?.type !== 'tuple') return undefined;
    return right.namedChildren.filter((item) => item.type === 'string').map(stringValue);
  }
  const kind = /^[A-Z][A-Z0-9_]*$/.test(name) ? 'const' : 'variable';
  const signature = compactSignature(text, node.startIndex, right?.startIndex ?? node.endIndex);
  facts.addSymbol({ name, kind, exported: isPublic(name), node: statement, signature });
  return undefined;
}

function importStatement(node: Node, facts: FileFacts): void {
  const line = node.startPosition.row + 1;
  if (node.type === 'import_statement') {
    for (const child of node.namedChildren) {
      const dotted = child.type === 'aliased_import' ? child.childForFieldName('name') : child;
      if (dotted?.type !== 'dotted_name') continue;
      const specifier = dotted.text;
      const alias = child.type === 'aliased_import' ? child.childForFieldName('alias')?.text : undefined;
      facts.addImport({ specifier, names: [], namespace: alias ?? specifier, line });
    }
    return;
  }
  const module = node.childForFieldName('module_name');
  if (module === null) return;
  const names: string[] = [];
  for (const child of node.namedChildren) {
    if (child.startIndex <= module.startIndex) continue;
    if (child.type === 'wildcard_import') names.push('*');
    else if (child.type === 'dotted_name') names.push(child.text);
    else if (child.type === 'aliased_import') {
      const name = child.childForFieldName('name')?.text;
      if (name !== undefined) names.push(name);
    }
  }
  facts.addImport({ specifier: module.text, names, line });
}

function argparseFlags(member: Node, facts: FileFacts): void {
  const call = member.parent;
  const args = call?.childForFieldName('arguments');
  for (const argument of args?.namedChildren ?? []) {
    if (argument.type !== 'string') break;
    const value = stringValue(argument);
    if (value.startsWith('-')) facts.addCliFlags(value);
  }
}
