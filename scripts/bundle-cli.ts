/**
 * Bundles the `ratchet` executable into `dist/bundle/` (run by `npm run build` after `tsc`).
 *
 * Why: Node's ESM loader resolves, reads, links and caches each module on its own, and the CLI
 * with its dependencies is about 800 of them (Kysely alone ~260, zod ~100): `ratchet tasks run`
 * spent ~400 ms of CPU loading modules before its first model call, and `ratchet status` ~200 ms
 * in all. Bundled (esbuild, code split at every dynamic `import()`), `status` starts in half the
 * time and a tasks run's coordinator saves ~250 ms of CPU. The command table's lazy loading is
 * kept: each command, workflow and provider SDK is its own chunk, loaded when it runs
 * (`test/e2e/cli-startup.test.ts` checks that on the bundle, through `meta.json`).
 *
 * What stays outside the bundle: packages that find files next to their own code at run time
 * (native addons, WebAssembly, Lua scripts, a shipped `rg`) and the TUI's Ink and React, which only
 * `ratchet team` loads. The library (`dist/index.js`) stays tsc's unbundled output.
 *
 * Every bundled file sits in `dist/bundle/`, two levels below the package root as tsc's output
 * in `dist/<layer>/` does, so the code's `import.meta.url`-relative paths (the package's
 * `package.json` and `prompts/`, the index's parse worker, which is an entry point of its own)
 * resolve the same from either.
 */
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const BUNDLE_DIR = `${ROOT}dist/bundle`;

/** Packages loaded from `node_modules` at run time rather than bundled (see above). */
const EXTERNAL = [
  'better-sqlite3',
  'oxc-parser',
  'web-tree-sitter',
  'tree-sitter-*',
  '@vscode/ripgrep',
  'bullmq',
  'ioredis',
  'ink',
  'react',
  'react/*',
];

await rm(BUNDLE_DIR, { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: {
    bin: 'src/cli/bin.ts',
    main: 'src/cli/main.ts',
    'parse-worker': 'src/code/index/parse-worker.ts',
    'task-worker': 'src/cli/task-worker.ts',
  },
  outdir: BUNDLE_DIR,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: EXTERNAL,
  // Bundled CommonJS dependencies call `require` for Node's built-ins; an ES module has none.
  banner: {
    js: "import { createRequire as __ratchetCreateRequire } from 'node:module';\nconst require = __ratchetCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
writeFileSync(`${BUNDLE_DIR}/meta.json`, JSON.stringify(result.metafile));
