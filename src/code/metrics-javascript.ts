/**
 * Size metrics of a JavaScript/TypeScript file from oxc's program (see `metrics.ts`): the size
 * check runs before every REFACTOR of a TDD or tasks run, and tree-sitter would make it compile
 * its grammars' WebAssembly in the coordinator first (issue 14). The answers are those of the
 * tree-sitter extractor this replaced: a method, getter, setter or constructor of a class or an
 * object literal is a method named after its nearest class; a function assigned to a variable,
 * an object key or a class field takes that name (keys as written: `'a'`, `[key]`, `#p`); a
 * signature without a body (overload, `declare`, `abstract`) is no function; a function's lines
 * run from its first token (a method's modifiers included, its decorators not) to its last.
 */
import type { Class, Node } from 'oxc-parser';
import { LineTable } from './index/line-table.js';
import type { ClassMetric, FunctionMetric } from './metrics.js';
import { loadOxcReader } from './oxc-program.js';
import type { LanguageId } from './tree-sitter.js';

export interface JavaScriptMetrics {
  functions: FunctionMetric[];
  classes: ClassMetric[];
}

/**
 * Functions and classes of a file; `unparsable` when it does not parse, undefined where oxc-parser
 * cannot load (the file is then measured as a language Ratchet does not parse: lines only).
 */
export async function measureJavaScript(
  path: string,
  text: string,
  language: LanguageId,
): Promise<JavaScriptMetrics | 'unparsable' | undefined> {
  const oxc = await loadOxcReader().catch(() => undefined);
  if (oxc === undefined) return undefined;
  const program = oxc.parse(path, text, language);
  if (program === undefined) return 'unparsable';
  const lines = new LineTable(text);
  const functions: FunctionMetric[] = [];
  const classes: ClassMetric[] = [];
  /** A key as written: computed keys with their brackets, as tree-sitter's `computed_property_name`. */
  const keyText = (key: Node, computed: boolean): string => {
    if (!computed) return text.slice(key.start, key.end);
    const open = text.lastIndexOf('[', key.start);
    const close = text.indexOf(']', key.end);
    return text.slice(open, close + 1);
  };
  const add = (node: Node, kind: FunctionMetric['kind'], name: string | undefined, start = node.start): void => {
    const startLine = lines.line(start);
    // `end` is exclusive: the last character is the one before it.
    const endLine = lines.line(Math.max(node.start, node.end - 1));
    functions.push({
      name: name ?? 'anonymous function',
      kind: name === undefined ? 'anonymous' : kind,
      startLine,
      endLine,
      lines: endLine - startLine + 1,
    });
  };
  oxc.walk(program, (node, ancestors) => {
    const parent = ancestors.at(-1);
    const className = (): string | undefined => {
      for (let index = ancestors.length - 1; index >= 0; index--) {
        const owner = ancestors[index];
        if (owner !== undefined && isClass(owner)) return owner.id?.name;
      }
      return undefined;
    };
    switch (node.type) {
      case 'ClassDeclaration':
      case 'ClassExpression':
        classes.push({
          name: node.id?.name ?? 'anonymous class',
          kind: 'class',
          methods: node.body.body.filter((member) => member.type === 'MethodDefinition' && hasBody(member.value))
            .length,
          startLine: lines.line(node.start),
        });
        return;
      case 'MethodDefinition': {
        if (!hasBody(node.value)) return;
        // A method starts after its decorators (tree-sitter's are its class body's children, not its own).
        const decorated = node.decorators.at(-1);
        const start = decorated === undefined ? node.start : text.slice(decorated.end).search(/\S/) + decorated.end;
        add(node, 'method', qualify(className(), keyText(node.key, node.computed)), start);
        return;
      }
      case 'Property':
        // `{ run() {} }` and `{ get size() {} }`: a method of the object, named after the nearest class.
        if (node.method || node.kind !== 'init')
          add(node, 'method', qualify(className(), keyText(node.key, node.computed)));
        return;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression': {
        if (!hasBody(node)) return;
        // The function of a method is counted with the method (its own node, above).
        if (
          parent?.type === 'MethodDefinition' ||
          (parent?.type === 'Property' && (parent.method || parent.kind !== 'init'))
        )
          return;
        const own = node.type === 'ArrowFunctionExpression' ? undefined : node.id?.name;
        if (own !== undefined) add(node, 'function', own);
        else if (parent?.type === 'VariableDeclarator' && parent.init === node)
          add(
            node,
            'function',
            parent.id.type === 'Identifier' ? parent.id.name : text.slice(parent.id.start, parent.id.end),
          );
        else if (parent?.type === 'Property' && parent.value === node)
          add(node, 'function', keyText(parent.key, parent.computed));
        else if (parent?.type === 'PropertyDefinition' && parent.value === node)
          add(node, 'method', qualify(className(), keyText(parent.key, parent.computed)));
        else add(node, 'anonymous', undefined);
        return;
      }
      default:
        return;
    }
  });
  return { functions, classes };
}

function isClass(node: Node): node is Class {
  return node.type === 'ClassDeclaration' || node.type === 'ClassExpression';
}

/** A function with a body: overloads, `declare` and `abstract` signatures have none. */
function hasBody(node: Node): boolean {
  return (
    (node.type === 'FunctionExpression' ||
      node.type === 'FunctionDeclaration' ||
      node.type === 'ArrowFunctionExpression') &&
    node.body !== null
  );
}

function qualify(container: string | undefined, name: string): string {
  return container === undefined ? name : `${container}.${name}`;
}
