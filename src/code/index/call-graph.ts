/**
 * The best-effort call graph: each call site's callee name is resolved to symbols of the calling
 * file or of the files it imports, in this order:
 *
 * 1. `this.m()` / `self.m()`: method `m` of the caller's own class.
 * 2. `ns.f()` where `ns` names an import (`import * as ns`, `import m as ns`, a Go package):
 *    top-level `f` of the imported files; where `ns` is an imported or local class: its method;
 *    where `ns` was imported by name (`from pkg import mod`): top-level `f` of that file.
 * 3. `f()`: a top-level `f` of the same file (in Go, of the same package), else of the imported
 *    file that `f` was imported from by name, else of any imported file when exactly one has it.
 * 4. `x.m()` / `make().m()` on anything else: method `m` when exactly one of the file and its
 *    imports has one.
 *
 * Unresolved calls (library functions, dynamic dispatch) are left out. The graph is derived on
 * demand and memoised per index because it is the most expensive derived view.
 */
import type { CallGraph, CodeIndex, IndexedFile } from './types.js';

const graphs = new WeakMap<CodeIndex, CallGraph>();

interface FileSymbols {
  /** Top-level names and `Container.name` keys -> qualified symbol names. */
  qualified: Set<string>;
  /** Method name -> qualified names (`Container.name`). */
  methods: Map<string, string[]>;
}

/** The call graph of `index` (computed once per index object). */
export function callGraphOf(index: CodeIndex): CallGraph {
  let graph = graphs.get(index);
  if (graph === undefined) {
    graph = buildCallGraph(index.files);
    graphs.set(index, graph);
  }
  return graph;
}

/** Number of caller -> callee edges. */
export function countCallEdges(graph: CallGraph): number {
  let edges = 0;
  for (const callees of Object.values(graph)) edges += callees.length;
  return edges;
}

function buildCallGraph(files: readonly IndexedFile[]): CallGraph {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const symbolCache = new Map<string, FileSymbols>();
  const symbolsOf = (path: string): FileSymbols => {
    let symbols = symbolCache.get(path);
    if (symbols === undefined) {
      symbols = { qualified: new Set(), methods: new Map() };
      for (const symbol of byPath.get(path)?.symbols ?? []) {
        if (symbol.container === undefined) symbols.qualified.add(symbol.name);
        else {
          const qualified = `${symbol.container}.${symbol.name}`;
          symbols.qualified.add(qualified);
          const list = symbols.methods.get(symbol.name);
          if (list === undefined) symbols.methods.set(symbol.name, [qualified]);
          else list.push(qualified);
        }
      }
      symbolCache.set(path, symbols);
    }
    return symbols;
  };
  const goPackages = new Map<string, string[]>();
  for (const file of files) {
    if (file.language !== 'go') continue;
    const directory = file.path.slice(0, Math.max(0, file.path.lastIndexOf('/')));
    const list = goPackages.get(directory);
    if (list === undefined) goPackages.set(directory, [file.path]);
    else list.push(file.path);
  }

  const graph: CallGraph = {};
  for (const file of files) {
    if (file.calls.length === 0) continue;
    const namedImports = new Map<string, string[]>();
    const namespaces = new Map<string, string[]>();
    const imported = new Set<string>();
    for (const ref of file.imports) {
      if (ref.resolved.length === 0) continue;
      for (const path of ref.resolved) imported.add(path);
      if (ref.namespace !== undefined) namespaces.set(ref.namespace, ref.resolved);
      for (const name of ref.names) if (name !== '*' && name !== 'default') namedImports.set(name, ref.resolved);
    }
    const local =
      file.language === 'go'
        ? (goPackages.get(file.path.slice(0, Math.max(0, file.path.lastIndexOf('/')))) ?? [file.path])
        : [file.path];
    const find = (paths: Iterable<string>, key: string): string[] => {
      const found: string[] = [];
      for (const path of paths) if (symbolsOf(path).qualified.has(key)) found.push(`${path}#${key}`);
      return found;
    };
    const uniqueMethod = (paths: Iterable<string>, name: string): string[] => {
      const found: string[] = [];
      for (const path of paths)
        for (const qualified of symbolsOf(path).methods.get(name) ?? []) found.push(`${path}#${qualified}`);
      return found.length === 1 ? found : [];
    };

    for (const { caller, callee } of file.calls) {
      const dot = callee.lastIndexOf('.');
      const name = callee.slice(dot + 1);
      const receiver = dot === -1 ? undefined : callee.slice(0, dot);
      let targets: string[];
      if (receiver === 'this' || receiver === 'self') {
        const container = caller?.includes('.') ? caller.slice(0, caller.indexOf('.')) : undefined;
        targets = container === undefined ? [] : find([file.path], `${container}.${name}`);
      } else if (receiver !== undefined) {
        const namespace = namespaces.get(receiver);
        const named = namedImports.get(receiver);
        targets = namespace !== undefined ? find(namespace, name) : [];
        if (targets.length === 0) targets = find(named ?? local, `${receiver}.${name}`);
        // `from pkg import mod` then `mod.f()`: the imported name is a module.
        if (targets.length === 0 && named !== undefined) targets = find(named, name);
        if (targets.length === 0) targets = uniqueMethod([...local, ...imported], name);
      } else {
        targets = find(local, name);
        if (targets.length === 0) targets = find(namedImports.get(name) ?? [], name);
        if (targets.length === 0) {
          const candidates = find(imported, name);
          targets = candidates.length === 1 ? candidates : [];
        }
      }
      if (targets.length === 0) continue;
      const from = `${file.path}#${caller ?? '<module>'}`;
      const existing = graph[from];
      if (existing === undefined) graph[from] = [...new Set(targets)];
      else for (const target of targets) if (!existing.includes(target)) existing.push(target);
    }
  }
  for (const callees of Object.values(graph)) callees.sort();
  return graph;
}
