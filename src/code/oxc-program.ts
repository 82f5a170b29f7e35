/**
 * oxc's ESTree program of one JavaScript/TypeScript file, for the analyses that run inside a
 * workflow (the test review after RED, the size checks before REFACTOR): oxc parses natively,
 * where tree-sitter would compile its grammars' WebAssembly in the process first. The index reads
 * oxc's raw buffer instead (`index/oxc-raw.ts`), which pays off only over thousands of files.
 *
 * oxc-parser is loaded on first use, as the index loads it: where its native binding cannot load
 * (a platform it ships none for), `loadOxcReader` rejects and each analysis degrades as it says,
 * instead of every command that imports an analysis failing to start.
 */
import type { Node, Program } from 'oxc-parser';
import type { LanguageId } from './tree-sitter.js';

export interface OxcReader {
  /** The program of a JavaScript-like file, or undefined when oxc reports any syntax error. */
  parse(path: string, text: string, language: LanguageId): Program | undefined;
  /**
   * Calls `enter` on every node of `program` in source order, parents before children (oxc's own
   * child keys list children in source order: the first mock of a file is the one reported);
   * `ancestors` holds the node's ancestors, nearest last (valid only during the call).
   */
  walk(program: Program, enter: (node: Node, ancestors: readonly Node[]) => void): void;
}

let loading: Promise<OxcReader> | undefined;

/** The reader, made once; rejects where oxc-parser cannot load. */
export function loadOxcReader(): Promise<OxcReader> {
  loading ??= import('oxc-parser').then(({ parseSync, visitorKeys }) => ({
    parse(path, text, language) {
      const parsed = parseSync(path, text, {
        lang: oxcLanguage(language),
        sourceType: 'unambiguous',
        preserveParens: true,
      });
      return parsed.errors.length > 0 ? undefined : parsed.program;
    },
    walk(program, enter) {
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
    },
  }));
  return loading;
}

/** oxc's language for a file: JSX is accepted in every JavaScript file, as tree-sitter's grammar does. */
function oxcLanguage(language: LanguageId): 'jsx' | 'ts' | 'tsx' {
  return language === 'tsx' ? 'tsx' : language === 'typescript' ? 'ts' : 'jsx';
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
