/**
 * Symbols, imports, exports and calls of Rust files; exported means a `pub` visibility. `use`
 * paths are imports, and so are out-of-line modules (`mod name;`, recorded as `mod name`, marked
 * `testOnly` under `#[cfg(test)]`). Functions with a test attribute (`#[test]`, `#[tokio::test]`)
 * are marked `test`; those of an inline `#[cfg(test)] mod tests { ... }` are recorded too, with
 * the module as their container, so the index knows the file holds its own tests.
 */
import type { Node } from 'web-tree-sitter';
import { FileFacts, compactSignature, forEachCall, withLeadingDocs, memberCallee } from './extract-shared.js';
import type { LanguageExtractor } from './language-extractor.js';
import { isRustTestAttribute, isRustTestOnlyAttribute } from './test-files.js';
import type { SymbolKind } from './types.js';

const CALL_QUERY = `
(call_expression function: (identifier) @callee)
(call_expression function: (scoped_identifier path: (_) @object name: (identifier) @property))
(call_expression function: (field_expression value: (_) @object field: (field_identifier) @property))
`;

const ITEM_KINDS: Readonly<Record<string, SymbolKind>> = {
  function_item: 'function',
  function_signature_item: 'function',
  struct_item: 'class',
  union_item: 'class',
  enum_item: 'type',
  trait_item: 'interface',
  type_item: 'type',
  const_item: 'const',
  static_item: 'variable',
};

export const rustExtractor: LanguageExtractor = {
  callQuery: CALL_QUERY,
  extract(root, text, callQuery, facts) {
    for (const [node, doc, attributes] of withAttributes(root.namedChildren, text))
      item(text, node, doc, facts, undefined, attributes);
    for (const symbol of facts.symbols) {
      if (symbol.exported && symbol.container === undefined) facts.addExport({ name: symbol.name, kind: symbol.kind });
    }
    if (callQuery === undefined) return;
    forEachCall(callQuery, root, ({ callee, object, property }) => {
      if (callee !== undefined) facts.addCall(callee.startIndex, callee.text);
      else if (property !== undefined)
        facts.addCall(property.startIndex, memberCallee(object, property, ['identifier', 'self']));
    });
  },
};

function isPub(text: string, node: Node): boolean {
  return text.startsWith('pub', node.startIndex);
}

/**
 * The items of `children` (see `withLeadingDocs`), each with the outer attributes written above
 * it (`#[test]`, `#[cfg(test)]`): a doc comment above the attributes is the item's.
 */
function* withAttributes(
  children: readonly Node[],
  text: string,
): Generator<[Node, string | undefined, readonly string[]]> {
  let attributes: string[] = [];
  let attributesDoc: string | undefined;
  for (const [node, doc] of withLeadingDocs(children, text)) {
    if (node.type === 'attribute_item') {
      if (attributes.length === 0) attributesDoc = doc;
      attributes.push(node.text);
      continue;
    }
    yield [node, attributes.length === 0 ? doc : (doc ?? attributesDoc), attributes];
    attributes = [];
    attributesDoc = undefined;
  }
}

function item(
  text: string,
  node: Node,
  doc: string | undefined,
  facts: FileFacts,
  container: string | undefined,
  attributes: readonly string[] = [],
): void {
  const kind = ITEM_KINDS[node.type];
  if (kind !== undefined) {
    const name = node.childForFieldName('name')?.text;
    if (name === undefined) return;
    const body = node.childForFieldName('body');
    const end = kind === 'type' && node.type === 'type_item' ? node.endIndex : (body?.startIndex ?? node.endIndex);
    facts.addSymbol({
      name,
      kind: container !== undefined && kind === 'function' ? 'method' : kind,
      exported: isPub(text, node),
      node,
      signature: compactSignature(text, node.startIndex, end).replace(/;$/, ''),
      doc,
      ...(container === undefined ? {} : { container }),
      ...(kind === 'function' && attributes.some(isRustTestAttribute) ? { test: true as const } : {}),
    });
    return;
  }
  if (node.type === 'impl_item') {
    const target = node.childForFieldName('type')?.text.replace(/<.*$/s, '');
    if (target === undefined) return;
    for (const member of node.childForFieldName('body')?.namedChildren ?? []) {
      if (member.type === 'function_item') item(text, member, undefined, facts, target);
    }
  } else if (node.type === 'use_declaration') {
    const argument = node.childForFieldName('argument');
    if (argument === null) return;
    const specifier = argument.text.replace(/\s+/g, '');
    const names = /\{([^}]*)\}$/.exec(specifier)?.[1]?.split(',').filter(Boolean) ?? [];
    facts.addImport({ specifier: specifier.replace(/::\{[^}]*\}$/, ''), names, line: node.startPosition.row + 1 });
  } else if (node.type === 'mod_item') {
    const name = node.childForFieldName('name')?.text;
    if (name === undefined) return;
    const testOnly = attributes.some(isRustTestOnlyAttribute);
    const body = node.childForFieldName('body');
    if (body === null)
      facts.addImport({
        specifier: `mod ${name}`,
        names: [],
        line: node.startPosition.row + 1,
        ...(testOnly ? { testOnly: true as const } : {}),
      });
    else if (testOnly) testModule(text, body, name, facts);
  }
}

/** The functions of an inline test module (`#[cfg(test)] mod tests { ... }`), its name their container. */
function testModule(text: string, body: Node, name: string, facts: FileFacts): void {
  for (const [node, doc, attributes] of withAttributes(body.namedChildren, text)) {
    if (node.type !== 'function_item') continue;
    const functionName = node.childForFieldName('name')?.text;
    if (functionName === undefined) continue;
    facts.addSymbol({
      name: functionName,
      kind: 'function',
      container: name,
      exported: false,
      node,
      signature: compactSignature(text, node.startIndex, node.childForFieldName('body')?.startIndex ?? node.endIndex),
      doc,
      ...(attributes.some(isRustTestAttribute) ? { test: true as const } : {}),
    });
  }
}
