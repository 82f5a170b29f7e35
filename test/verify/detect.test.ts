import { execFileSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { createProcessRunner } from '../../src/process/runner.js';
import {
  describeCheckCommand,
  detectCheckCommands,
  detectFramework,
  detectTestCommand,
  leadingCd,
  missingExecutable,
} from '../../src/verify/detect.js';
import { runTests } from '../../src/verify/run-tests.js';
import { toolchain } from '../support/toolchains.js';
import { makeProject } from './helpers.js';

const NO_PYTEST = { pathEnv: '/nonexistent' };
const clippyToolchain = toolchain('clippy');
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

  // ufo's `pnpm lint && vitest run --typecheck`: per-test results come only from a bare runner
  // call, and lint runs as a gate of its own, so the runner part is the test command.
  it.each([
    ['pnpm lint && vitest run --typecheck', 'npx vitest run --typecheck', 'vitest', 'pnpm lint'],
    ['eslint . && prettier -c src && jest --ci', 'npx jest --ci', 'jest', 'eslint . && prettier -c src'],
    ['npm run lint && npm run typecheck && pnpm vitest', 'npx vitest', 'vitest', 'npm run lint && npm run typecheck'],
    ['tsc --noEmit && node --test test/', 'node --test test/', 'node-test', 'tsc --noEmit'],
    // defu's: the types checked by a script of their own.
    ['pnpm lint && pnpm test:types && pnpm vitest run', 'npx vitest run', 'vitest', 'pnpm lint && pnpm test:types'],
  ])('takes the runner of a script that checks first: %s', async (script, command, framework, dropped) => {
    const root = await makeProject({ 'package.json': pkg({ test: script }) });
    expect(await detectTestCommand(root, undefined, NO_PYTEST)).toEqual({
      command,
      framework,
      source: 'detected',
      marker: `package.json scripts.test without \`${dropped}\``,
    });
  });

  it.each([
    'npm run build && vitest run',
    'pnpm lint && vitest run | tee out.txt',
    'pnpm lint; vitest run',
    'pnpm lint && NODE_ENV=test vitest run',
    'vitest run && pnpm lint',
    'pnpm test:unit && vitest run',
  ])('keeps npm test for a script whose other steps are not checks: %s', async (script) => {
    const root = await makeProject({ 'package.json': pkg({ test: script }) });
    expect((await detectTestCommand(root, undefined, NO_PYTEST)).command).toBe('npm test');
  });

  // python-json-pointer: `tests.py` run by `python3 -munittest`; pytest's discovery finds nothing.
  it('takes a Python project’s Makefile test target when it is one runner call', async () => {
    const root = await makeProject({
      'setup.py': '',
      makefile: 'help:\n\t@echo "targets"\n\ntest:\n\tpython3 -munittest\n\ncoverage:\n\tcoverage run tests.py\n',
    });
    expect(await detectTestCommand(root, undefined, NO_PYTEST)).toEqual({
      command: 'python3 -m unittest',
      framework: 'unittest',
      source: 'detected',
      marker: 'makefile test target',
    });
    const pytest = await makeProject({ 'pyproject.toml': '', Makefile: 'test:\n\t@python -m pytest -q tests\n' });
    expect((await detectTestCommand(pytest, undefined, NO_PYTEST)).command).toBe('python -m pytest -q tests');
  });

  it.each([
    'test:\n\tpip install -e .\n\tpytest\n',
    'test:\n\t$(PYTHON) -m pytest\n',
    'test: lint\n\ttox\n',
    'check:\n\tpython3 -m unittest\n',
  ])('keeps the pytest default for a Makefile test target that is not one runner call: %j', async (makefile) => {
    const root = await makeProject({ 'setup.py': '', Makefile: makefile });
    expect(await detectTestCommand(root, undefined, NO_PYTEST)).toMatchObject({
      command: 'python3 -m pytest',
      marker: 'setup.py',
    });
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

  it('follows a test script through the scripts it runs to their one runner (fastify-plugin: npm run test:unit && ...)', async () => {
    const chained = await makeProject({
      'package.json': pkg({
        test: 'npm run test:unit && npm run test:typescript',
        'test:unit': 'c8 --100 node --test',
        'test:typescript': 'tstyche',
      }),
    });
    expect(await detectTestCommand(chained, undefined, NO_PYTEST)).toMatchObject({
      command: 'npm test',
      framework: 'node-test',
    });
    expect((await detectTestCommand(chained, 'npm test')).framework).toBe('node-test');
    const yarn = await makeProject({ 'package.json': pkg({ test: 'yarn test:unit', 'test:unit': 'vitest run' }) });
    expect((await detectTestCommand(yarn, 'npm test')).framework).toBe('vitest');
    // Two runners, or a script that calls itself: nothing to follow to one runner.
    const two = await makeProject({
      'package.json': pkg({ test: 'npm run unit && npm run e2e', unit: 'vitest run', e2e: 'jest' }),
    });
    expect((await detectTestCommand(two, 'npm test')).framework).toBe('npm');
    const loop = await makeProject({ 'package.json': pkg({ test: 'npm run again', again: 'npm test' }) });
    expect((await detectTestCommand(loop, 'npm test')).framework).toBe('npm');
  });

  it('follows scripts through a wrapper to a node file of node:test tests (remark: c8 -- npm run test-api)', async () => {
    const remark = await makeProject({
      'package.json': pkg({
        test: 'npm run build && npm run test-coverage',
        build: 'tsc --build',
        'test-coverage': 'c8 --100 --reporter lcov -- npm run test-api',
        'test-api': 'node --conditions development test.js',
      }),
      'test.js': "import test from 'node:test'\ntest('parses', () => {})\n",
      'plain.js': "console.log('no tests here')\n",
    });
    expect(await detectTestCommand(remark, undefined, NO_PYTEST)).toMatchObject({
      command: 'npm test',
      framework: 'node-test',
    });
    expect((await detectTestCommand(remark, 'npm run test-api')).framework).toBe('node-test');
    expect((await detectTestCommand(remark, 'node --conditions development test.js')).framework).toBe('node-test');
    expect((await detectTestCommand(remark, 'node plain.js')).framework).toBe('custom');
    expect((await detectTestCommand(remark, 'npm run build')).framework).toBe('custom');
  });

  it('resolves `cd <dir> && npm test` through that directory’s package.json', async () => {
    const root = await makeProject({
      'package.json': pkg({ test: 'jest' }),
      'frontend/package.json': pkg({ test: 'vitest run' }),
      'web/app/package.json': pkg({ test: 'node --test' }),
    });
    expect((await detectTestCommand(root, 'cd frontend && npm test')).framework).toBe('vitest');
    expect((await detectTestCommand(root, 'cd web && cd app && npm test')).framework).toBe('node-test');
    expect((await detectTestCommand(root, 'cd "web/app" && npm run test')).framework).toBe('node-test');
  });

  it('fails with a config error and a hint when nothing is found, naming what it looked for', async () => {
    const root = await makeProject({ 'README.md': '# nothing' });
    const error: unknown = await detectTestCommand(root).catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'config')).toBe(true);
    expect(error).toMatchObject({
      message: expect.stringMatching(
        new RegExp(
          `^No test command found in ${root}: none of pom\\.xml, .*setup\\.cfg, conftest\\.py, go\\.mod or Cargo\\.toml`,
        ),
      ) as unknown,
      hint: 'Set [test] command = "..." in .ratchet/config.toml',
    });
  });

  it('says when package.json has only npm’s placeholder test script', async () => {
    const root = await makeProject({ 'package.json': pkg({ test: 'echo "Error: no test specified" && exit 1' }) });
    const error: unknown = await detectTestCommand(root).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ message: expect.stringContaining("npm's placeholder") as unknown });
  });

  it('suggests the projects of a monorepo-ish layout one directory down, without choosing one', async () => {
    const root = await makeProject({
      'README.md': '# two projects',
      'backend/pytest.ini': '[pytest]\n',
      'frontend/package.json': pkg({ test: 'vitest run' }),
      'node_modules/dep/package.json': pkg({ test: 'jest' }),
      '.hidden/go.mod': 'module x\n',
    });
    const error: unknown = await detectTestCommand(root, undefined, NO_PYTEST).catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'config')).toBe(true);
    expect(error).toMatchObject({
      hint:
        'Set [test] command = "..." in .ratchet/config.toml, e.g. for the project in a subdirectory: ' +
        '[test] command = "cd backend && python3 -m pytest" or [test] command = "cd frontend && npm test"',
    });
  });

  it('uses the Maven wrapper when the project has one', async () => {
    const root = await makeProject({ 'pom.xml': '<project/>', mvnw: '#!/bin/sh\n' });
    expect(await detectTestCommand(root)).toMatchObject({ command: './mvnw test', framework: 'maven' });
  });
});

describe('missingExecutable', () => {
  it('names a program that is not on PATH, with how to install it', async () => {
    const root = await makeProject({ 'build.gradle': '' });
    expect(await missingExecutable('gradle test', root, '/nonexistent')).toEqual({
      executable: 'gradle',
      reason: 'not-installed',
      hint: expect.stringContaining('Install Gradle') as unknown,
    });
    expect(await missingExecutable('FOO=1 cargo test', root, '/nonexistent')).toMatchObject({
      executable: 'cargo',
      hint: expect.stringContaining('rustup') as unknown,
    });
  });

  it('finds a program on PATH and a wrapper in the project, and tells a wrapper that is not executable', async () => {
    const root = await makeProject({ gradlew: '#!/bin/sh\n', mvnw: '#!/bin/sh\n' });
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'mvn'), '#!/bin/sh\n');
    await chmod(path.join(bin, 'mvn'), 0o755);
    await chmod(path.join(root, 'gradlew'), 0o755);
    await chmod(path.join(root, 'mvnw'), 0o644);
    expect(await missingExecutable('mvn -q test', root, bin)).toBeUndefined();
    expect(await missingExecutable('./gradlew test', root, '/nonexistent')).toBeUndefined();
    expect(await missingExecutable('./mvnw test', root, '/nonexistent')).toMatchObject({
      executable: './mvnw',
      reason: 'not-executable',
      hint: expect.stringContaining('chmod +x ./mvnw') as unknown,
    });
    expect(await missingExecutable('./run-tests.sh', root, '/nonexistent')).toMatchObject({
      reason: 'not-installed',
    });
  });

  const pytest = toolchain('python3-pytest');
  it.skipIf(pytest.missing)(
    `fails \`python3 -m pytest\` when that python cannot import pytest${pytest.note}`,
    async () => {
      const root = await makeProject({ 'pytest.ini': '' });
      // A venv without pytest: the system python has it, this one does not see it.
      execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', path.join(root, 'venv')]);
      const bin = path.join(root, 'venv/bin');
      expect(await missingExecutable('python3 -m pytest -q', root, `${bin}:/usr/bin:/bin`)).toEqual({
        executable: 'python3',
        reason: 'missing-module',
        hint: 'Install pytest (python3 -m pip install pytest), or set [test] command = "python3 -m unittest"',
      });
      expect(await missingExecutable('venv/bin/python -m pytest', root, '/nonexistent')).toMatchObject({
        executable: 'venv/bin/python',
        reason: 'missing-module',
      });
      // The system python has pytest; unittest needs nothing; lint commands are not asked about.
      expect(await missingExecutable('python3 -m pytest', root, '/usr/bin:/bin')).toBeUndefined();
      expect(await missingExecutable('python3 -m unittest', root, `${bin}:/usr/bin:/bin`)).toBeUndefined();
      expect(await missingExecutable('python3 -m pytest', root, `${bin}:/usr/bin:/bin`, 'lint')).toBeUndefined();
    },
  );

  it('does not guess about shell built-ins, variables and subshells', async () => {
    const root = await makeProject({});
    for (const command of ['cd backend && pytest', '$RUNNER test', '(make test)', 'env CI=1 npm test'])
      expect(await missingExecutable(command, root, '/nonexistent')).toBeUndefined();
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
    ['cd frontend && npm test', 'npm'],
    ['cd gosvc && go test ./...', 'go'],
    ['cd rs && cargo test', 'cargo'],
    ['cd backend && python3 -m unittest discover', 'unittest'],
    ['cd $DIR && npm test', 'custom'],
  ])('%s -> %s', (command, framework) => {
    expect(detectFramework(command)).toBe(framework);
  });
});

describe('leadingCd', () => {
  it('splits leading `cd <dir> &&` off a command', () => {
    expect(leadingCd('cd frontend && npm test')).toEqual({
      dir: 'frontend',
      prefix: 'cd frontend && ',
      rest: 'npm test',
    });
    expect(leadingCd("cd 'my app' &&npm test")).toEqual({ dir: 'my app', prefix: "cd 'my app' &&", rest: 'npm test' });
    expect(leadingCd('cd a && cd b/c && go test ./...')).toMatchObject({ dir: 'a/b/c', rest: 'go test ./...' });
    expect(leadingCd('cd a && cd /abs && go test')).toMatchObject({ dir: '/abs' });
    for (const command of [
      'npm test',
      'cd $X && npm test',
      'cd ~/x && npm test',
      'cd - && x',
      'cd x; npm test',
      'cd x &&',
    ])
      expect(leadingCd(command)).toBeUndefined();
  });
});

describe('runTests with a runner that is not installed', () => {
  it('names the program the shell could not find, and says to install the dependencies of an npm project', async () => {
    const root = await makeProject({ 'package.json': pkg({ test: 'ratchet-no-such-runner --ci' }) });
    const error: unknown = await runTests({
      command: 'npm test',
      framework: 'npm',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.reports'),
    }).catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'config')).toBe(true);
    expect(error).toMatchObject({
      message: 'Test command not found: npm test (ratchet-no-such-runner: not found)',
      hint: `Install the project's dependencies (npm install), or set [test] command = "..." in .ratchet/config.toml`,
    });
  });

  it('names the install command of the lock file the project has (pnpm: ufo)', async () => {
    const root = await makeProject({
      'package.json': pkg({ test: 'ratchet-no-such-runner --ci' }),
      'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
    });
    const error: unknown = await runTests({
      command: 'npm test',
      framework: 'npm',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.reports'),
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      hint: `Install the project's dependencies (pnpm install), or set [test] command = "..." in .ratchet/config.toml`,
    });
  });

  it('names a missing program of a configured command', async () => {
    const root = await makeProject({ 'README.md': '# x' });
    const error: unknown = await runTests({
      command: 'ratchet-no-such-runner test',
      framework: 'custom',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.reports'),
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      message: 'Test command not found: ratchet-no-such-runner test (ratchet-no-such-runner: not found)',
      hint: 'Install ratchet-no-such-runner or set [test] command = "..." in .ratchet/config.toml',
    });
  });
});

describe('detectCheckCommands', () => {
  /** A PATH holding (do-nothing) executables of these names. */
  async function toolsOnPath(names: string[]): Promise<string> {
    const dir = await makeProject(Object.fromEntries(names.map((name) => [name, '#!/bin/sh\nexit 0\n'])));
    for (const name of names) await chmod(path.join(dir, name), 0o755);
    return dir;
  }

  it("takes package.json's lint and typecheck scripts, else tsgo or tsc for a TypeScript project", async () => {
    const scripts = await makeProject({
      'package.json': pkg({ test: 'vitest', lint: 'eslint .', 'type-check': 'tsc -b' }),
    });
    expect(await detectCheckCommands(scripts, NO_PYTEST)).toEqual({
      lint: { command: 'npm run lint', marker: 'package.json scripts.lint' },
      typecheck: { command: 'npm run type-check', marker: 'package.json scripts.type-check' },
    });
    const typescript = await makeProject({
      'package.json': pkg({ test: 'vitest' }, { typescript: '^6' }),
      'tsconfig.json': '{}',
    });
    expect(await detectCheckCommands(typescript, NO_PYTEST)).toEqual({
      typecheck: { command: 'npx tsc --noEmit', marker: 'tsconfig.json' },
    });
    // A project on tsgo (TypeScript's native port) checks with it, even beside typescript...
    const tsgo = await makeProject({
      'package.json': pkg({ test: 'vitest' }, { typescript: '^5.9', '@typescript/native-preview': '7.0.0-dev' }),
      'tsconfig.json': '{}',
    });
    expect(await detectCheckCommands(tsgo, NO_PYTEST)).toEqual({
      typecheck: { command: 'npx tsgo --noEmit', marker: 'package.json @typescript/native-preview' },
    });
    // ... unless its own script says how (as vite's `typecheck: tsgo --noEmit` would).
    const tsgoScript = await makeProject({
      'package.json': pkg({ test: 'vitest', 'check-types': 'tsgo -b' }, { '@typescript/native-preview': '7.0.0-dev' }),
      'tsconfig.json': '{}',
    });
    expect(await detectCheckCommands(tsgoScript, NO_PYTEST)).toEqual({
      typecheck: { command: 'npm run check-types', marker: 'package.json scripts.check-types' },
    });
    // TypeScript named but no tsconfig.json: nothing to check against.
    expect(
      await detectCheckCommands(await makeProject({ 'package.json': pkg({}, { typescript: '^6' }) }), NO_PYTEST),
    ).toEqual({});
  });

  it('takes the Python tools the project configures, only when they are installed', async () => {
    const pyproject = '[project]\nname = "x"\n\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n';
    const root = await makeProject({ 'pyproject.toml': pyproject });
    expect(await detectCheckCommands(root, { pathEnv: await toolsOnPath(['ruff', 'mypy']) })).toEqual({
      lint: { command: 'ruff check .', marker: 'pyproject.toml [tool.ruff]' },
      typecheck: { command: 'mypy .', marker: 'pyproject.toml [tool.mypy]' },
    });
    // Configured but not installed: named, so that init can say so.
    expect(await detectCheckCommands(root, NO_PYTEST)).toEqual({
      notInstalled: {
        lint: {
          tool: 'ruff',
          marker: 'pyproject.toml [tool.ruff]',
          install: 'pip install ruff',
          command: 'ruff check .',
          configured: true,
        },
        typecheck: {
          tool: 'mypy',
          marker: 'pyproject.toml [tool.mypy]',
          install: 'pip install mypy',
          command: 'mypy .',
          configured: true,
        },
      },
    });
    // flake8 when ruff is not configured; mypy from setup.cfg.
    const cfg = await makeProject({ 'setup.cfg': '[flake8]\nmax-line-length = 100\n\n[mypy]\n', 'ruff.toml': '' });
    expect(await detectCheckCommands(cfg, { pathEnv: await toolsOnPath(['flake8', 'mypy']) })).toEqual({
      lint: { command: 'flake8', marker: 'setup.cfg [flake8]' },
      typecheck: { command: 'mypy .', marker: 'setup.cfg [mypy]' },
    });
    // Installed but not configured: not guessed.
    expect(
      await detectCheckCommands(await makeProject({ 'pytest.ini': '' }), {
        pathEnv: await toolsOnPath(['ruff', 'mypy']),
      }),
    ).toEqual({});
  });

  it('proposes clippy as the lint of a Rust crate when cargo clippy works, and otherwise says how to add it', async () => {
    const crate = await makeProject({ 'Cargo.toml': '[package]\nname = "x"\nversion = "0.1.0"\n' });
    const clippy = 'cargo clippy --all-targets -- -D warnings';
    expect(await detectCheckCommands(crate, { ...NO_PYTEST, clippyWorks: () => Promise.resolve(true) })).toEqual({
      lint: { command: clippy, marker: 'Cargo.toml' },
    });
    const without = await detectCheckCommands(crate, { ...NO_PYTEST, clippyWorks: () => Promise.resolve(false) });
    expect(without.lint).toBeUndefined();
    expect(without.notInstalled?.lint).toMatchObject({ tool: 'clippy', command: clippy, configured: false });
    expect(describeCheckCommand('lint', without)).toContain('rustup component add clippy');
  });

  it.skipIf(clippyToolchain.missing)(
    `asks cargo whether clippy works: this machine's cargo clippy${clippyToolchain.note}`,
    async () => {
      const crate = await makeProject({ 'Cargo.toml': '[package]\nname = "x"\nversion = "0.1.0"\n' });
      expect((await detectCheckCommands(crate)).lint?.command).toBe('cargo clippy --all-targets -- -D warnings');
      // No cargo on PATH: no clippy either.
      expect((await detectCheckCommands(crate, NO_PYTEST)).lint).toBeUndefined();
    },
  );

  it("runs plain mypy when its configuration names the files to check (attrs's [tool.mypy] files): mypy . would override them", async () => {
    const tools = { pathEnv: await toolsOnPath(['mypy']) };
    const typecheck = async (files: Record<string, string>): Promise<string | undefined> =>
      (await detectCheckCommands(await makeProject(files), tools)).typecheck?.command;

    expect(
      await typecheck({ 'pyproject.toml': '[tool.mypy]\nfiles = ["src/attr", "src/attrs"]\nstrict = true\n' }),
    ).toBe('mypy');
    expect(await typecheck({ 'pyproject.toml': '[tool.mypy]\npackages = "attr"\n' })).toBe('mypy');
    expect(await typecheck({ 'mypy.ini': '[mypy]\nfiles = src, tests/typing_example.py\n' })).toBe('mypy');
    expect(await typecheck({ 'setup.cfg': '[metadata]\nname = x\n\n[mypy]\nfiles =\n    src,\n    tests\n' })).toBe(
      'mypy',
    );
    // No list of files (or an empty one, or one in another tool's section): mypy . as before.
    expect(await typecheck({ 'pyproject.toml': '[tool.mypy]\nstrict = true\nfiles = []\n' })).toBe('mypy .');
    expect(await typecheck({ 'setup.cfg': '[mypy]\nstrict = True\n\n[flake8]\nfiles = src\n' })).toBe('mypy .');
    // mypy reads mypy.ini first: the files named in pyproject.toml do not count then.
    expect(
      await typecheck({ 'mypy.ini': '[mypy]\nstrict = True\n', 'pyproject.toml': '[tool.mypy]\nfiles = ["src"]\n' }),
    ).toBe('mypy .');
  });

  it('says what init found for each check, a configured tool that is not installed included', async () => {
    const root = await makeProject({
      'pyproject.toml': '[tool.ruff]\nline-length = 79\n\n[tool.mypy]\nfiles = ["src"]\n',
    });
    const checks = await detectCheckCommands(root, { pathEnv: await toolsOnPath(['mypy']) });

    expect(describeCheckCommand('lint', checks)).toBe(
      'ruff is configured in pyproject.toml [tool.ruff] but not installed (not on PATH): install it (pip install ruff) or set [lint] command = "..." to run another in VERIFY',
    );
    expect(describeCheckCommand('typecheck', checks)).toBe(
      'detected typecheck command: mypy (from pyproject.toml [tool.mypy])',
    );
    expect(describeCheckCommand('lint', {})).toBe(
      'no lint command detected (set [lint] command = "..." to run one in VERIFY)',
    );
  });

  it('vets a Go module with the Go toolchain', async () => {
    const root = await makeProject({ 'go.mod': 'module x\n' });
    expect(await detectCheckCommands(root, { pathEnv: await toolsOnPath(['go']) })).toEqual({
      lint: { command: 'go vet ./...', marker: 'go.mod' },
    });
    expect(await detectCheckCommands(root, NO_PYTEST)).toEqual({});
  });
});
