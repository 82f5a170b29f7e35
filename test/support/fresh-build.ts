/**
 * Vitest global setup of the end-to-end tests (project `e2e`, see vitest.config.ts): they run the
 * built CLI, so `dist/` is rebuilt first when a file of `src/` is newer. `npm test` builds before
 * vitest starts, which leaves nothing to do here; `vitest run test/e2e/...` after an edit builds
 * once, before any test file starts (the test files run in parallel and must not build at once).
 */
import { execFileSync } from 'node:child_process';
import { PACKAGE_ROOT, sourcesNewerThanBuild } from './run-cli.js';

export default function setup(): void {
  const newer = sourcesNewerThanBuild();
  if (newer.length === 0) return;
  console.log(`dist/ is older than ${newer.length} source file(s) (e.g. ${newer[0] ?? ''}): npm run build`);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
}
