/**
 * Parses files and extracts their symbols, imports, exports, calls and CLI flags: JavaScript and
 * TypeScript with oxc (see `extract-oxc.ts`), falling back to tree-sitter for a file oxc rejects
 * or where oxc cannot run; Python, Go, Java and Rust with tree-sitter. One extractor keeps one
 * parser per language for its lifetime (creating one per file costs more than parsing a small
 * file); dispose it to free their wasm memory.
 */
import { Parser, Query, type Language } from 'web-tree-sitter';
import { languageIdForFile, loadLanguage, type LanguageId } from '../tree-sitter.js';
import { FileFacts } from './extract-shared.js';
import { goExtractor } from './extract-go.js';
import { OxcExtractor } from './extract-oxc.js';
import { javaExtractor } from './extract-java.js';
import { javascriptExtractor } from './extract-javascript.js';
import { pythonExtractor } from './extract-python.js';
import { rustExtractor } from './extract-rust.js';
import type { LanguageExtractor } from './language-extractor.js';
import type { LineTable } from './line-table.js';
import { loadOxcRaw } from './oxc-raw.js';
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
  grammar: Language;
}

/** oxc's extractor, or undefined where oxc cannot run (or its raw walk no longer has a node type the visitor names). */
async function loadOxcExtractor(): Promise<OxcExtractor | undefined> {
  const api = await loadOxcRaw();
  try {
    return api === undefined ? undefined : new OxcExtractor(api);
  } catch {
    return undefined;
  }
}

/** Languages oxc parses (and tree-sitter when oxc rejects a file). */
const OXC_LANGUAGES: ReadonlySet<LanguageId> = new Set(['typescript', 'tsx', 'javascript']);

/** True for the files oxc parses (JavaScript and TypeScript). */
export function isParsedByOxc(path: string): boolean {
  const language = languageIdForFile(path);
  return language !== undefined && OXC_LANGUAGES.has(language);
}

export interface SourceExtractorOptions {
  /** What parses JavaScript and TypeScript (default `oxc`); `tree-sitter` serves to compare the two. */
  javascript?: 'oxc' | 'tree-sitter';
}

/** Parses files and extracts what the index records; dispose it to free its parsers. */
export class SourceExtractor implements Disposable {
  private readonly tools = new Map<LanguageId, Promise<LanguageTools>>();
  /** oxc's extractor once loaded: null where oxc cannot run. */
  private oxc: OxcExtractor | null | undefined;
  private oxcLoading: Promise<void> | undefined;
  private readonly useOxc: boolean;

  constructor(options: SourceExtractorOptions = {}) {
    this.useOxc = options.javascript !== 'tree-sitter';
  }

  /** Parse results for `text`, read from `path` (which selects the language); undefined when unsupported. */
  async extract(path: string, text: string): Promise<FileParseResult | undefined> {
    return await this.extractNow(path, text);
  }

  /**
   * `extract`, without a promise when nothing needs loading (oxc loaded and accepting the file):
   * a cold index extracts thousands of files in a row, and a promise and a turn of the microtask
   * queue per file add up.
   */
  extractNow(
    path: string,
    text: string,
    /** The text's lines, when the caller has them already. */
    lines?: LineTable,
  ): FileParseResult | undefined | Promise<FileParseResult | undefined> {
    const language = languageIdForFile(path);
    if (language === undefined) return undefined;
    if (this.useOxc && OXC_LANGUAGES.has(language)) {
      if (this.oxc === undefined) {
        this.oxcLoading ??= loadOxcExtractor().then((oxc) => void (this.oxc = oxc ?? null));
        // Without `lines`: a line table is read only before the next one is made (see `LineTable`).
        return this.oxcLoading.then(() => this.extractNow(path, text));
      }
      try {
        const result = this.oxc?.extract(path, text, language, lines);
        if (result !== undefined) return result;
      } catch {
        // An AST shape this version of the extractor does not expect: tree-sitter still reads the file.
      }
    }
    return this.treeSitter(path, text, language);
  }

  private async treeSitter(path: string, text: string, language: LanguageId): Promise<FileParseResult | undefined> {
    const { parser, grammar } = await this.toolsFor(language);
    const tree = parser.parse(text);
    if (tree === null) return undefined;
    try {
      const facts = new FileFacts();
      // Declaration files hold no calls: their query is not even compiled (about 12 MB for TypeScript's).
      const declarationFile = /\.d\.[cm]?ts$/.test(path);
      const callQuery = declarationFile ? undefined : callQueryFor(language, grammar);
      EXTRACTORS[language].extract(tree.rootNode, text, callQuery, facts);
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
        return { parser, grammar };
      });
      this.tools.set(language, tools);
    }
    return tools;
  }
}
