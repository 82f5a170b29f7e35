/** Symbols, imports, exports and calls of Go files; exported means a capitalised name. */
import type { Node } from 'web-tree-sitter';
import {
  FileFacts,
  compactSignature,
  forEachCall,
  withLeadingDocs,
  memberCallee,
  stringValue,
} from './extract-shared.js';
import type { LanguageExtractor } from './language-extractor.js';
import type { SymbolKind } from './types.js';

const CALL_QUERY = `
(call_expression function: (identifier) @callee)
(call_expression function: (selector_expression operand: (_) @object field: (field_identifier) @property))
`;

export const goExtractor: LanguageExtractor = {
  callQuery: CALL_QUERY,
  extract(root, text, callQuery, facts) {
    for (const [node, doc] of withLeadingDocs(root.namedChildren, text)) declaration(text, node, doc, facts);
    for (const symbol of facts.symbols) {
      if (symbol.exported && symbol.container === undefined) facts.addExport({ name: symbol.name, kind: symbol.kind });
    }
    if (callQuery === undefined) return;
    forEachCall(callQuery, root, ({ callee, object, property }) => {
      if (callee !== undefined) facts.addCall(callee.startIndex, callee.text);
      else if (property !== undefined)
        facts.addCall(property.startIndex, memberCallee(object, property, ['identifier']));
    });
  },
};

function isExported(name: string): boolean {
  return /^\p{Lu}/u.test(name);
}

function declaration(text: string, node: Node, doc: string | undefined, facts: FileFacts): void {
  switch (node.type) {
    case 'function_declaration':
    case 'method_declaration': {
      const name = node.childForFieldName('name')?.text;
      if (name === undefined) return;
      const signature = compactSignature(
        text,
        node.startIndex,
        node.childForFieldName('body')?.startIndex ?? node.endIndex,
      );
      const receiver = node.type === 'method_declaration' ? receiverType(node) : undefined;
      facts.addSymbol({
        name,
        kind: receiver === undefined ? 'function' : 'method',
        exported: isExported(name) && (receiver === undefined || isExported(receiver)),
        node,
        signature,
        doc,
        ...(receiver === undefined ? {} : { container: receiver }),
      });
      return;
    }
    case 'type_declaration':
      for (const spec of node.namedChildren) {
        if (spec.type !== 'type_spec' && spec.type !== 'type_alias') continue;
        const name = spec.childForFieldName('name')?.text;
        if (name === undefined) continue;
        const type = spec.childForFieldName('type')?.type;
        const kind: SymbolKind = type === 'struct_type' ? 'class' : type === 'interface_type' ? 'interface' : 'type';
        const end = kind === 'type' ? spec.endIndex : (spec.childForFieldName('type')?.startIndex ?? spec.endIndex);
        const signature = `type ${compactSignature(text, spec.startIndex, end)}${kind === 'class' ? ' struct' : kind === 'interface' ? ' interface' : ''}`;
        facts.addSymbol({ name, kind, exported: isExported(name), node: spec, signature, doc });
      }
      return;
    case 'var_declaration':
    case 'const_declaration': {
      const kind: SymbolKind = node.type === 'const_declaration' ? 'const' : 'variable';
      const keyword = kind === 'const' ? 'const' : 'var';
      for (const spec of specs(node)) {
        const value = spec.childForFieldName('value');
        const signature = `${keyword} ${compactSignature(text, spec.startIndex, value?.startIndex ?? spec.endIndex)}`;
        for (const nameNode of spec.childrenForFieldName('name')) {
          const name = nameNode.text;
          if (name === '_') continue;
          facts.addSymbol({ name, kind, exported: isExported(name), node: spec, signature, doc });
        }
      }
      return;
    }
    case 'import_declaration':
      for (const spec of node.descendantsOfType('import_spec')) {
        const path = spec.childForFieldName('path');
        if (path === null) continue;
        const specifier = stringValue(path);
        const alias = spec.childForFieldName('name')?.text;
        const namespace = alias ?? specifier.split('/').at(-1) ?? specifier;
        facts.addImport({ specifier, names: [], namespace, line: spec.startPosition.row + 1 });
      }
      return;
    default:
      return;
  }
}

function specs(node: Node): Node[] {
  const result: Node[] = [];
  for (const child of node.namedChildren) {
    if (child.type === 'var_spec' || child.type === 'const_spec') result.push(child);
    else if (child.type === 'var_spec_list' || child.type === 'const_spec_list')
      result.push(...child.namedChildren.filter((spec) => spec.type === 'var_spec' || spec.type === 'const_spec'));
  }
  return result;
}

/** `S` of `func (s *S[T]) M()`. */
function receiverType(node: Node): string | undefined {
  const receiver = node.childForFieldName('receiver')?.text ?? '';
  return /(\w+)\s*(?:\[[^\]]*\])?\s*\)\s*$/.exec(receiver)?.[1];
}
