import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { detectFramework, detectTestCommand } from '../../src/verify/detect.js';
import { makeProject } from './helpers.js';

const NO_PYTEST = { pathEnv: '/nonexistent' };
const pkg = (scripts: Record<string, string>, devDependencies: Record<string, string> = {}): string =>
  JSON.stringify({ name: 'x', scripts, devDependencies });

describe('detectTestCommand', () => {
  it.each([
    [{ 'pom.xml': '<project/>' }, 'mvn test', 'maven', 'pom.xml'],
    [{ 'build.gradle': '' }, 'gradle test', 'gradle', 'build.gradle'],
    [{ 'build.gradle.kts': '', gradlew: '#!/bin/sh\n' }, './gradlew test', 'gradle', 'build.gradle.kts'],
    [{ 'package.json': pkg({ test: 'node --test' }) }, 'npm test', 'node-test', 'package.json'],
    [{ 'package.json': pkg({ test: 'vitest run' }) }, 'npm test', 'vitest', 'package.json'],
    [{ 'package.json': pkg({ test: 'jest --ci' }) }, 'npm test', 'jest', 'package.json'],
    [{ 'package.json': pkg({ test: 'mocha' }) }, 'npm test', 'mocha', 'package.json'],
    [{ 'package.json': pkg({ test: 'run-tests.sh' }, { vitest: '^5' }) }, 'npm test', 'vitest', 'package.json'],
    [{ 'package.json': pkg({ test: './run.sh' }) }, 'npm test', 'npm', 'package.json'],
    [{ 'pytest.ini': '' }, 'python3 -m pytest', 'pytest', 'pytest.ini'],
    [{ 'pyproject.toml': '' }, 'python3 -m pytest', 'pytest', 'pyproject.toml'],
    [{ 'setup.py': '' }, 'python3 -m pytest', 'pytest', 'setup.py'],
    [{ 'setup.cfg': '' }, 'python3 -m pytest', 'pytest', 'setup.cfg'],
    [{ 'conftest.py': '' }, 'python3 -m pytest', 'pytest', 'conftest.py'],
    [{ 'go.mod': 'module x\n' }, 'go test ./...', 'go', 'go.mod'],
    [{ 'Cargo.toml': '[package]\n' }, 'cargo test', 'cargo', 'Cargo.toml'],
  ])('detects %j', async (files, command, framework, marker) => {
    const root = await makeProject(files);
    expect(await detectTestCommand(root, undefined, NO_PYTEST)).toEqual({
      command,
      framework,
      source: 'detected',
      marker,
    });
  });

  it('follows the seed order: Maven before Gradle before npm before pytest before Go before Cargo', async () => {
    const all = {
      'pom.xml': '<project/>',
      'build.gradle': '',
      'package.json': pkg({ test: 'jest' }),
      'pytest.ini': '',
      'go.mod': 'module x\n',
      'Cargo.toml': '',
    };
    const order = ['pom.xml', 'build.gradle', 'package.json', 'pytest.ini', 'go.mod', 'Cargo.toml'];
    for (let index = 0; index < order.length; index += 1) {
      const files = Object.fromEntries(Object.entries(all).filter(([name]) => order.indexOf(name) >= index));
      const detected = await detectTestCommand(await makeProject(files), undefined, NO_PYTEST);
      expect(detected.marker).toBe(order[index]);
    }
  });

  it('skips npm’s placeholder test script', async () => {
    const root = await makeProject({
      'package.json': pkg({ test: 'echo "Error: no test specified" && exit 1' }),
      'pyproject.toml': '',
    });
    expect((await detectTestCommand(root, undefined, NO_PYTEST)).framework).toBe('pytest');
  });

  it('uses a pytest executable found on PATH', async () => {
    const root = await makeProject({ 'pytest.ini': '' });
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'pytest'), '#!/bin/sh\n');
    await chmod(path.join(bin, 'pytest'), 0o755);
    expect((await detectTestCommand(root, undefined, { pathEnv: bin })).command).toBe('pytest');
  });

  it('lets a configured command win and guesses its framework', async () => {
    const root = await makeProject({ 'pom.xml': '<project/>' });
    expect(await detectTestCommand(root, 'python3 -m unittest discover')).toEqual({
      command: 'python3 -m unittest discover',
      framework: 'unittest',
      source: 'config',
      marker: 'config',
    });
  });

  it('resolves a configured `npm test` through package.json', async () => {
    const root = await makeProject({ 'package.json': pkg({ test: 'node --test test/' }) });
    expect((await detectTestCommand(root, 'npm test')).framework).toBe('node-test');
  });

  it('fails with a config error and a hint when nothing is found', async () => {
    const root = await makeProject({ 'README.md': '# nothing' });
    const error: unknown = await detectTestCommand(root).catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'config')).toBe(true);
    expect(error).toMatchObject({
      message: `No test command found in ${root}`,
      hint: 'Set [test] command = "..." in .ratchet/config.toml',
    });
  });
});

describe('detectFramework', () => {
  it.each([
    ['mvn -q test', 'maven'],
    ['./mvnw test', 'maven'],
    ['./gradlew test', 'gradle'],
    ['npx vitest run', 'vitest'],
    ['jest --ci', 'jest'],
    ['mocha test/', 'mocha'],
    ['node --test', 'node-test'],
    ['node --experimental-strip-types --test test/', 'node-test'],
    ['pytest -q', 'pytest'],
    ['python3 -m pytest tests', 'pytest'],
    ['python -m unittest discover -s tests', 'unittest'],
    ['go test ./...', 'go'],
    ['cargo test --all', 'cargo'],
    ['npm test', 'npm'],
    ['npm run test', 'npm'],
    ['make check', 'custom'],
  ])('%s -> %s', (command, framework) => {
    expect(detectFramework(command)).toBe(framework);
  });
});
