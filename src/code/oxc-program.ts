/**
 * oxc's ESTree program of one JavaScript/TypeScript file, for the analyses that run inside a
 * workflow (the test review after RED, the size checks before REFACTOR): oxc parses natively,
 * where tree-sitter would compile its grammars' WebAssembly in the process first. The index reads
 * oxc's raw buffer instead (`index/oxc-raw.ts`), which pays off only over thousands of files.
 */
import { parseSync, visitorKeys, type Node, type Program } from 'oxc-parser';
import type { LanguageId } from './tree-sitter.js';

/** oxc's language for a file: JSX is accepted in every JavaScript file, as tree-sitter's grammar does. */
function oxcLanguage(language: LanguageId): 'jsx' | 'ts' | 'tsx' {
  return language === 'tsx' ? 'tsx' : language === 'typescript' ? 'ts' : 'jsx';
}

/** The program of a JavaScript-like file, or undefined when oxc reports any syntax error. */
export function parseProgram(path: string, text: string, language: LanguageId): Program | undefined {
  const parsed = parseSync(path, text, {
    lang: oxcLanguage(language),
    sourceType: 'unambiguous',
    preserveParens: true,
  });
  return parsed.errors.length > 0 ? undefined : parsed.program;
}

/**
 * Calls `enter` on every node of `program` in source order, parents before children (oxc's own
 * child keys list children in source order: the first mock of a file is the one reported);
 * `ancestors` holds the node's ancestors, nearest last (valid only during the call).
 */
export function walkProgram(program: Program, enter: (node: Node, ancestors: readonly Node[]) => void): void {
  const ancestors: Node[] = [];
  const visit = (node: Node): void => {
    enter(node, ancestors);
    ancestors.push(node);
    for (const key of visitorKeys[node.type] ?? []) {
      const child: unknown = (node as unknown as Record<string, unknown>)[key];
      if (Array.isArray(child)) {
        for (const item of child) if (isNode(item)) visit(item);
      } else if (isNode(child)) visit(child);
    }
    ancestors.pop();
  };
  visit(program);
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
