/**
 * Makes `src/code/index/oxc-raw-walk.generated.ts` at install (npm's `prepare`, so `npm install`
 * and `npm ci` run it; not kept in git: it is derived from a dependency's code, so each checkout
 * makes it from the oxc-parser it installed) from oxc-parser's own generated lazy walker
 * (`src-js/generated/lazy/walk.js` of the pinned version): the same walk over the raw AST buffer,
 * where every `new <Node>(pos, ast)` (an object cached in a Map per file, which each visited node
 * cost) becomes the node's position in the buffer. A visitor function receives that position
 * and reads the fields it needs from the buffer (`src/code/index/oxc-raw.ts`).
 *
 * `test/code/oxc-raw-layout.test.ts` regenerates it from the installed package and compares, so
 * a walker left from another oxc-parser fails there until this is run again (`npm install`, or
 * `npx tsx scripts/generate-oxc-raw-walk.ts`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GENERATED_WALK = fileURLToPath(new URL('../src/code/index/oxc-raw-walk.generated.ts', import.meta.url));

/** The installed oxc-parser's lazy walker. */
export function oxcLazyWalkSource(): string {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve('oxc-parser/package.json');
  return readFileSync(join(packageJson, '..', 'src-js', 'generated', 'lazy', 'walk.js'), 'utf8');
}

export function generateRawWalk(walkSource: string): string {
  const imports = /^import \{[^}]*\} from "\.\/constructors\.js";\n/m;
  if (!imports.test(walkSource))
    throw new Error('oxc-parser lazy walk.js: the import of constructors.js is not where expected');
  const constructed = /new [A-Z]\w*\(pos, ast\)/g;
  const count = walkSource.match(constructed)?.length ?? 0;
  if (count === 0) throw new Error('oxc-parser lazy walk.js: no node constructions found');
  // A leaf node (an identifier, a literal, `this`...) has nothing under it: its walk only calls
  // its visitor, and the index visits none, so its walk and every call of it go (about half the
  // nodes of a file). `rawVisitors` refuses a leaf type for that reason.
  const leaf =
    /^function (walk\w+)\(pos, ast, visitors\) \{\n {2}const visit = visitors\[\d+\];\n {2}if \(visit !== null\) visit\(new \w+\(pos, ast\)\);\n\}\n\n/gm;
  const leaves = new Set<string>();
  let body = walkSource.replace(imports, '').replace(leaf, (_whole, name: string) => {
    leaves.add(name);
    return '';
  });
  if (leaves.size === 0) throw new Error('oxc-parser lazy walk.js: no leaf walks found');
  const boxes = new Set([...leaves].map((name) => name.replace(/^walk/, 'walkBox')));
  body = body.replace(
    /^function (walkBox\w+)\(pos, ast, visitors\) \{\n {2}return walk\w+\(.*\);\n\}\n\n/gm,
    (whole, name: string) => (boxes.has(name) ? '' : whole),
  );
  // A call of a leaf's walk goes, with the `if` it is the body of (a test of an Option, no effect).
  body = body.replace(/^( *if \(.*\)\n)? *(walk\w+)\(.*\);\n/gm, (whole, _test: string | undefined, name: string) =>
    leaves.has(name) || boxes.has(name) ? '' : whole,
  );
  for (const name of [...leaves, ...boxes])
    if (new RegExp(`\\b${name}\\(`).test(body)) throw new Error(`oxc-parser lazy walk.js: ${name} is still called`);
  // Types hold no call the index records (a computed key of a type literal aside, which a type
  // checker rejects unless it is a unique symbol: `[Symbol.iterator]`, a member, not a call): type
  // annotations, type arguments and parameters, and the type of `type X =`, `as`, `satisfies`
  // are not walked (about 30 ms of the bench's 6,000 files).
  for (const name of TYPE_WALKS) {
    const walk = new RegExp(`^function ${name}\\(pos, ast, visitors\\) \\{\\n[\\s\\S]*?^\\}\\n`, 'm');
    if (!walk.test(body)) throw new Error(`oxc-parser lazy walk.js: ${name} not found`);
    body = body.replace(walk, `function ${name}(pos, ast, visitors) {}\n`);
  }
  body = body.replace(constructed, 'pos');
  if (/new [A-Z]\w*\(pos/.test(body)) throw new Error('oxc-parser lazy walk.js: a node construction was left');
  return [
    '/* eslint-disable */',
    '// @ts-nocheck',
    "// Generated at install by scripts/generate-oxc-raw-walk.ts from the installed oxc-parser's",
    "// src-js/generated/lazy/walk.js (MIT); not in git, do not edit. Visitors receive the node's buffer position;",
    '// leaf nodes and types are not walked: WALKED_TYPE_IDS lists the node types that are.',
    body,
    `export const WALKED_TYPE_IDS = [${walkedTypeIds(body).join(', ')}];`,
    '',
  ].join('\n');
}

const TYPE_WALKS = [
  'walkTSTypeAnnotation',
  'walkTSType',
  'walkTSTypeParameterInstantiation',
  'walkTSTypeParameterDeclaration',
];

/** The ids of the node types whose visitor a walk from the program can reach (`visitors[id]`). */
function walkedTypeIds(body: string): number[] {
  const calls = new Map<string, string[]>();
  const ids = new Map<string, number[]>();
  for (const match of body.matchAll(/^function (\w+)\(pos, ast, visitors\) \{(\}|\n[\s\S]*?^\})\n/gm)) {
    const [, name = '', code = ''] = match;
    calls.set(
      name,
      [...code.matchAll(/\b(walk\w+)\(/g)].map((call) => call[1] ?? ''),
    );
    ids.set(
      name,
      [...code.matchAll(/visitors\[(\d+)\]/g)].map((read) => Number(read[1])),
    );
  }
  const reached = new Set<string>();
  const pending = ['walkProgram'];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (reached.has(name)) continue;
    reached.add(name);
    pending.push(...(calls.get(name) ?? []));
  }
  if (reached.size < 50) throw new Error('oxc-parser lazy walk.js: the walk from walkProgram reaches too little');
  return [...new Set([...reached].flatMap((name) => ids.get(name) ?? []))].sort((a, b) => a - b);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(GENERATED_WALK, generateRawWalk(oxcLazyWalkSource()));
}
