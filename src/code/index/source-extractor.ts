/**
 * Parses files and extracts their symbols, imports, exports, calls and CLI flags. One extractor
 * keeps one parser per language for its lifetime (creating one per file costs more than parsing
 * a small file); dispose it to free their wasm memory.
 */
import { Parser, Query, type Language } from 'web-tree-sitter';
import { languageIdForFile, loadLanguage, type LanguageId } from '../tree-sitter.js';
import { FileFacts } from './extract-shared.js';
import { goExtractor } from './extract-go.js';
import { javaExtractor } from './extract-java.js';
import { javascriptExtractor } from './extract-javascript.js';
import { pythonExtractor } from './extract-python.js';
import { rustExtractor } from './extract-rust.js';
import type { LanguageExtractor } from './language-extractor.js';
import type { FileParseResult } from './types.js';

const EXTRACTORS: Readonly<Record<LanguageId, LanguageExtractor>> = {
  typescript: javascriptExtractor,
  tsx: javascriptExtractor,
  javascript: javascriptExtractor,
  python: pythonExtractor,
  go: goExtractor,
  java: javaExtractor,
  rust: rustExtractor,
};

/**
 * Compiled call queries by grammar. Like grammars (see `tree-sitter.ts`) they are immutable and
 * costly to build (tens of milliseconds for the TypeScript grammar), so they live as long as the
 * grammar does instead of per extractor.
 */
const callQueries = new WeakMap<Language, Query>();

function callQueryFor(language: LanguageId, grammar: Language): Query {
  let query = callQueries.get(grammar);
  if (query === undefined) {
    query = new Query(grammar, EXTRACTORS[language].callQuery);
    callQueries.set(grammar, query);
  }
  return query;
}

interface LanguageTools {
  parser: Parser;
  callQuery: Query;
}

/** Parses files and extracts what the index records; dispose it to free its parsers. */
export class SourceExtractor implements Disposable {
  private readonly tools = new Map<LanguageId, Promise<LanguageTools>>();

  /** Parse results for `text`, read from `path` (which selects the language); undefined when unsupported. */
  async extract(path: string, text: string): Promise<FileParseResult | undefined> {
    const language = languageIdForFile(path);
    if (language === undefined) return undefined;
    const { parser, callQuery } = await this.toolsFor(language);
    const tree = parser.parse(text);
    if (tree === null) return undefined;
    try {
      const facts = new FileFacts();
      const declarationFile = /\.d\.[cm]?ts$/.test(path);
      EXTRACTORS[language].extract(tree.rootNode, text, declarationFile ? undefined : callQuery, facts);
      return facts.finish({ language, hasErrors: tree.rootNode.hasError });
    } finally {
      tree.delete();
    }
  }

  [Symbol.dispose](): void {
    for (const tools of this.tools.values()) {
      void tools.then(
        ({ parser }) => parser.delete(),
        () => undefined,
      );
    }
    this.tools.clear();
  }

  private toolsFor(language: LanguageId): Promise<LanguageTools> {
    let tools = this.tools.get(language);
    if (tools === undefined) {
      tools = loadLanguage(language).then((grammar) => {
        const parser = new Parser();
        parser.setLanguage(grammar);
        return { parser, callQuery: callQueryFor(language, grammar) };
      });
      this.tools.set(language, tools);
    }
    return tools;
  }
}
