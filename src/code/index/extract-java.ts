/** Symbols, imports, exports and calls of Java files; exported means `public`. */
import type { Node } from 'web-tree-sitter';
import { FileFacts, compactSignature, forEachCall, withLeadingDocs, memberCallee } from './extract-shared.js';
import type { LanguageExtractor } from './language-extractor.js';
import type { SymbolKind } from './types.js';

const CALL_QUERY = `
(method_invocation object: (_) @object name: (identifier) @property)
(method_invocation !object name: (identifier) @callee)
(object_creation_expression type: (type_identifier) @callee)
`;

const TYPE_KINDS: Readonly<Record<string, SymbolKind>> = {
  class_declaration: 'class',
  enum_declaration: 'class',
  record_declaration: 'class',
  interface_declaration: 'interface',
  annotation_type_declaration: 'interface',
};

export const javaExtractor: LanguageExtractor = {
  callQuery: CALL_QUERY,
  extract(root, text, callQuery, facts) {
    for (const [node, doc] of withLeadingDocs(root.namedChildren, text)) {
      if (node.type === 'import_declaration') {
        const specifier = node.text
          .replace(/^import\s+(static\s+)?/, '')
          .replace(/\s*;\s*$/, '')
          .replace(/\s+/g, '');
        const namespace = specifier.split('.').at(-1) ?? specifier;
        facts.addImport({ specifier, names: [], namespace, line: node.startPosition.row + 1 });
      } else if (TYPE_KINDS[node.type] !== undefined) typeDeclaration(text, node, doc, facts);
    }
    for (const symbol of facts.symbols) {
      if (symbol.exported && symbol.container === undefined) facts.addExport({ name: symbol.name, kind: symbol.kind });
    }
    if (callQuery === undefined) return;
    forEachCall(callQuery, root, ({ callee, object, property }) => {
      if (callee !== undefined) facts.addCall(callee.startIndex, callee.text);
      else if (property !== undefined)
        facts.addCall(property.startIndex, memberCallee(object, property, ['identifier', 'this']));
    });
  },
};

function isPublic(node: Node): boolean {
  const modifiers = node.namedChildren.find((child) => child.type === 'modifiers');
  return modifiers !== undefined && /\bpublic\b/.test(modifiers.text);
}

function typeDeclaration(text: string, node: Node, doc: string | undefined, facts: FileFacts): void {
  const name = node.childForFieldName('name')?.text;
  const kind = TYPE_KINDS[node.type];
  if (name === undefined || kind === undefined) return;
  const body = node.childForFieldName('body');
  const exported = isPublic(node);
  const signature = compactSignature(text, node.startIndex, body?.startIndex ?? node.endIndex);
  facts.addSymbol({ name, kind, exported, node, signature, doc });
  for (const [member, memberDoc] of withLeadingDocs(body?.namedChildren ?? [], text)) {
    if (member.type !== 'method_declaration' && member.type !== 'constructor_declaration') continue;
    const methodName = member.childForFieldName('name')?.text;
    if (methodName === undefined) continue;
    const end = member.childForFieldName('body')?.startIndex ?? member.endIndex;
    facts.addSymbol({
      name: methodName,
      kind: 'method',
      container: name,
      exported: exported && (kind === 'interface' || isPublic(member)),
      node: member,
      signature: compactSignature(text, member.startIndex, end).replace(/;$/, ''),
      doc: memberDoc,
    });
  }
}
