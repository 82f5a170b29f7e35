/** The shape every per-language extractor implements (see `extract-file.ts` for the driver). */
import type { Node, Query } from 'web-tree-sitter';
import type { FileFacts } from './extract-shared.js';

export interface LanguageExtractor {
  /** Tree-sitter query for call sites, compiled once per language by the driver. */
  callQuery: string;
  /**
   * Walks the tree of one file and records what it finds in `facts`. `callQuery` is undefined
   * for declaration files (`.d.ts`), which have no call sites.
   */
  extract(root: Node, text: string, callQuery: Query | undefined, facts: FileFacts): void;
}
