/**
 * Size metrics of a source file: line count, every function (with its name and span) and the
 * method count of every class — or, in Go and Rust, of every type with methods. JavaScript and
 * TypeScript are read from oxc's program (`metrics-javascript.ts`), the other languages from their
 * tree-sitter tree, with one table of per-language extractors.
 */
import type { Node } from 'web-tree-sitter';
import { measureJavaScript } from './metrics-javascript.js';
import { languageIdForFile, parseFile, type LanguageId } from './tree-sitter.js';

export interface FunctionMetric {
  /** Function name; `Container.name` for methods; `anonymous function` for lambdas/closures. */
  name: string;
  kind: 'function' | 'method' | 'anonymous';
  /** 1-based first and last line (inclusive). */
  startLine: number;
  endLine: number;
  lines: number;
}

export interface ClassMetric {
  name: string;
  /** `class` (classes, enums, records) or `type` (Go receiver types, Rust `impl` targets). */
  kind: 'class' | 'type';
  methods: number;
  startLine: number;
}

export interface CodeMetrics {
  /** null when the language is not supported (only `lines` is measured). */
  language: LanguageId | null;
  lines: number;
  /** True when the file does not parse cleanly; functions and classes are then empty. */
  hasErrors: boolean;
  functions: FunctionMetric[];
  classes: ClassMetric[];
}

/** Lines of text as an editor shows them (a final newline does not start another line). */
export function countLines(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** Measures a file's text; the path only selects the language. */
export async function measureCode(path: string, text: string): Promise<CodeMetrics> {
  const lines = countLines(text);
  const language = languageIdForFile(path);
  if (isJavaScriptLanguage(language)) {
    const measured = await measureJavaScript(path, text, language);
    if (measured === undefined) return { language: null, lines, hasErrors: false, functions: [], classes: [] };
    return measured === 'unparsable'
      ? { language, lines, hasErrors: true, functions: [], classes: [] }
      : { language, lines, hasErrors: false, ...measured };
  }
  const parsed = await parseFile(path, text);
  if (parsed === undefined)
    return {
      language: null,
      lines,
      hasErrors: false,
      functions: [],
      classes: [],
    };
  using file = parsed;
  if (file.hasErrors)
    return {
      language: file.language,
      lines,
      hasErrors: true,
      functions: [],
      classes: [],
    };
  if (isJavaScriptLanguage(file.language)) throw new Error(`${path} is JavaScript: measured with oxc above`);
  const extractor = EXTRACTORS[file.language];
  const root = file.tree.rootNode;
  return {
    language: file.language,
    lines,
    hasErrors: false,
    functions: extractor.functions(root),
    classes: extractor.classes(root),
  };
}

interface Extractor {
  functions(root: Node): FunctionMetric[];
  classes(root: Node): ClassMetric[];
}

const python: Extractor = {
  functions: (root) =>
    root.descendantsOfType('function_definition').map((node) => {
      const owner = pythonOwnerClass(node);
      const name = field(node, 'name');
      return owner === undefined ? fn(node, 'function', name) : fn(node, 'method', qualify(field(owner, 'name'), name));
    }),
  classes: (root) =>
    root.descendantsOfType('class_definition').map((node) => {
      const members = node.childForFieldName('body')?.namedChildren ?? [];
      const methods = members.filter(
        (m) =>
          m.type === 'function_definition' ||
          (m.type === 'decorated_definition' && m.childForFieldName('definition')?.type === 'function_definition'),
      );
      return cls(node, field(node, 'name') ?? 'class', methods.length);
    }),
};

const go: Extractor = {
  functions: (root) =>
    root.descendantsOfType(['function_declaration', 'method_declaration', 'func_literal']).map((node) => {
      if (node.type === 'func_literal') return fn(node, 'anonymous', undefined);
      if (node.type === 'function_declaration') return fn(node, 'function', field(node, 'name'));
      return fn(node, 'method', qualify(goReceiverType(node), field(node, 'name')));
    }),
  classes: (root) => groupByType(root.descendantsOfType('method_declaration'), goReceiverType),
};

const JAVA_CLASSES = ['class_declaration', 'enum_declaration', 'record_declaration', 'interface_declaration'];
const JAVA_METHODS = ['method_declaration', 'constructor_declaration', 'compact_constructor_declaration'];

const java: Extractor = {
  functions: (root) =>
    root
      .descendantsOfType([...JAVA_METHODS, 'lambda_expression'])
      .map((node) =>
        node.type === 'lambda_expression'
          ? fn(node, 'anonymous', undefined)
          : fn(node, 'method', qualify(ancestorName(node, JAVA_CLASSES), field(node, 'name'))),
      ),
  classes: (root) =>
    root.descendantsOfType(JAVA_CLASSES).map((node) => {
      const body = node.childForFieldName('body')?.namedChildren ?? [];
      // Enum methods sit one level down, in `enum_body_declarations`.
      const members = body.flatMap((m) => (m.type === 'enum_body_declarations' ? m.namedChildren : [m]));
      return cls(node, field(node, 'name') ?? 'class', members.filter((m) => JAVA_METHODS.includes(m.type)).length);
    }),
};

const rust: Extractor = {
  functions: (root) =>
    root.descendantsOfType(['function_item', 'closure_expression']).map((node) => {
      if (node.type === 'closure_expression') return fn(node, 'anonymous', undefined);
      const owner = ancestor(node, ['impl_item', 'trait_item']);
      if (owner === undefined) return fn(node, 'function', field(node, 'name'));
      const ownerName = owner.type === 'impl_item' ? typeName(field(owner, 'type')) : field(owner, 'name');
      return fn(node, 'method', qualify(ownerName, field(node, 'name')));
    }),
  classes: (root) => {
    // Inherent impls only: trait impls (Display, From, ...) say little about a type's size.
    const inherent = root.descendantsOfType('impl_item').filter((impl) => impl.childForFieldName('trait') === null);
    const methods = inherent.flatMap((impl) =>
      (impl.childForFieldName('body')?.namedChildren ?? []).filter((m) => m.type === 'function_item'),
    );
    return groupByType(methods, (method) => {
      const impl = ancestor(method, ['impl_item']);
      return impl === undefined ? undefined : typeName(field(impl, 'type'));
    });
  },
};

/** The languages read from a tree-sitter tree (JavaScript and TypeScript come from oxc). */
type TreeSitterLanguage = Exclude<LanguageId, JavaScriptLanguage>;

const EXTRACTORS: Readonly<Record<TreeSitterLanguage, Extractor>> = {
  python,
  go,
  java,
  rust,
};

type JavaScriptLanguage = 'javascript' | 'typescript' | 'tsx';

function isJavaScriptLanguage(language: LanguageId | undefined): language is JavaScriptLanguage {
  return language === 'javascript' || language === 'typescript' || language === 'tsx';
}

function fn(node: Node, kind: FunctionMetric['kind'], name: string | undefined): FunctionMetric {
  const startLine = node.startPosition.row + 1;
  const endLine = node.endPosition.row + 1;
  const resolvedKind = name === undefined ? 'anonymous' : kind;
  return {
    name: name ?? 'anonymous function',
    kind: resolvedKind,
    startLine,
    endLine,
    lines: endLine - startLine + 1,
  };
}

function cls(node: Node, name: string, methods: number): ClassMetric {
  return {
    name,
    kind: 'class',
    methods,
    startLine: node.startPosition.row + 1,
  };
}

/** Counts methods per owning type (Go receivers, Rust impl targets), in first-seen order. */
function groupByType(methods: Node[], ownerOf: (method: Node) => string | undefined): ClassMetric[] {
  const byType = new Map<string, ClassMetric>();
  for (const method of methods) {
    const owner = ownerOf(method);
    if (owner === undefined) continue;
    const entry = byType.get(owner) ?? {
      name: owner,
      kind: 'type',
      methods: 0,
      startLine: method.startPosition.row + 1,
    };
    entry.methods += 1;
    byType.set(owner, entry);
  }
  return [...byType.values()];
}

function field(node: Node, name: string): string | undefined {
  return node.childForFieldName(name)?.text;
}

function qualify(container: string | undefined, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  return container === undefined ? name : `${container}.${name}`;
}

function ancestor(node: Node, types: readonly string[]): Node | undefined {
  for (let current = node.parent; current !== null; current = current.parent) {
    if (types.includes(current.type)) return current;
  }
  return undefined;
}

function ancestorName(node: Node, types: readonly string[]): string | undefined {
  const owner = ancestor(node, types);
  return owner === undefined ? undefined : field(owner, 'name');
}

/** The class a Python function is a method of: its block's parent, through a decorator. */
function pythonOwnerClass(node: Node): Node | undefined {
  const member = node.parent?.type === 'decorated_definition' ? node.parent : node;
  const block = member.parent;
  return block?.type === 'block' && block.parent?.type === 'class_definition' ? block.parent : undefined;
}

function goReceiverType(method: Node): string | undefined {
  const parameter = method.childForFieldName('receiver')?.namedChildren.find((c) => c.type === 'parameter_declaration');
  return typeName(parameter?.childForFieldName('type')?.text);
}

/** `*Stack[T]` / `Stack<T>` -> `Stack`. */
function typeName(text: string | undefined): string | undefined {
  const name = text?.replace(/^[*&\s]+/, '').split(/[<[\s]/)[0];
  return name === undefined || name === '' ? undefined : name;
}
