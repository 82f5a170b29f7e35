/**
 * `npm test` runs the package's test script without npm's own process in between
 * (`src/verify/npm-script.ts`) when npm would do nothing more than run it, and through npm
 * otherwise. Each project here has an `npm` first on PATH that only leaves a mark and fails, so
 * whether npm ran is seen, not guessed from timing.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { directNpmTest } from '../../src/verify/npm-script.js';
import { runTests } from '../../src/verify/run-tests.js';
import { makeProject } from './helpers.js';

const SCRIPT =
  'echo "event=$npm_lifecycle_event name=$npm_package_name version=$npm_package_version init=$INIT_CWD"; greet; exit 3';

/** A project whose test script prints npm's variables, runs a local bin, and exits 3; a marking `npm` on PATH. */
async function project(scripts: Record<string, string>, extra: Record<string, string> = {}) {
  const root = await makeProject({
    'package.json': JSON.stringify({ name: 'direct', version: '1.2.3', scripts }),
    'node_modules/.bin/greet': '#!/bin/sh\necho "hello from the local bin"\n',
    'fake-npm/npm': `#!/bin/sh\ntouch "${'$'}(dirname "$0")/ran"\necho "npm ran: $*"\nexit 99\n`,
    ...extra,
  });
  await chmod(path.join(root, 'node_modules/.bin/greet'), 0o755);
  await chmod(path.join(root, 'fake-npm/npm'), 0o755);
  const run = () =>
    runTests({
      command: 'npm test',
      framework: 'npm',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.reports'),
      environment: { PATH: `${path.join(root, 'fake-npm')}:${process.env.PATH ?? ''}`, HOME: path.join(root, 'home') },
    });
  return { root, run, npmRan: () => existsSync(path.join(root, 'fake-npm', 'ran')) };
}

describe('npm test without npm', () => {
  it("runs the test script as npm would (its variables, node_modules/.bin on PATH, the script's exit code) and names the command npm test", async () => {
    const { root, run, npmRan } = await project({ test: SCRIPT });
    const result = await run();
    expect(npmRan()).toBe(false);
    expect(result.command).toBe('npm test');
    expect(result.exitCode).toBe(3);
    expect(result.output).toContain(`event=test name=direct version=1.2.3 init=${root}`);
    expect(result.output).toContain('hello from the local bin');
  });

  it('leaves the run to npm when it would do more: pre/post scripts, a project .npmrc', async () => {
    const setups: Array<{ scripts: Record<string, string>; extra?: Record<string, string> }> = [
      { scripts: { test: SCRIPT, pretest: 'echo before' } },
      { scripts: { test: SCRIPT, posttest: 'echo after' } },
      { scripts: { test: SCRIPT }, extra: { '.npmrc': 'script-shell=/bin/bash\n' } },
    ];
    for (const setup of setups) {
      const { run, npmRan } = await project(setup.scripts, setup.extra);
      const result = await run();
      expect(npmRan()).toBe(true);
      expect(result.output).toContain('npm ran: test');
    }
  });

  it("leaves it to npm when the user's .npmrc sets the script shell or node options", async () => {
    const { root, run, npmRan } = await project({ test: SCRIPT });
    await mkdir(path.join(root, 'home'), { recursive: true });
    await writeFile(path.join(root, 'home', '.npmrc'), 'node-options=--max-old-space-size=512\n');
    await run();
    expect(npmRan()).toBe(true);
  });

  it('appends the arguments after -- to the script, and keeps npm for shell syntax or another script', async () => {
    const root = await makeProject({ 'package.json': JSON.stringify({ scripts: { test: 'vitest run', lint: 'x' } }) });
    const env = { PATH: '/usr/bin' };
    const direct = await directNpmTest("npm test -- --reporter=json --outputFile='/a b'", root, env);
    // node_modules/.bin of the package and of every directory above, set by the command itself.
    expect(direct?.command.startsWith(`export PATH=${path.join(root, 'node_modules', '.bin')}:`)).toBe(true);
    expect(direct?.command).toContain(':/node_modules/.bin:"$PATH" && exec /bin/sh -c ');
    expect(direct?.command.endsWith(`/bin/sh -c 'vitest run --reporter=json --outputFile='\\''/a b'\\'''`)).toBe(true);
    expect(direct?.env.PATH).toBeUndefined();
    expect((await directNpmTest('npm run test', root, env))?.env.npm_lifecycle_event).toBe('test');
    expect(await directNpmTest('npm test && echo done', root, env)).toBeUndefined();
    expect(await directNpmTest('npm run lint', root, env)).toBeUndefined();
    expect(await directNpmTest('npm test', root, {})).toBeUndefined();
    expect(await directNpmTest('npm test', path.join(root, 'missing'), env)).toBeUndefined();
  });
});
