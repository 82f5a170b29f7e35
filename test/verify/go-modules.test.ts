/**
 * A Go repository with a module of its own below the root (golang-lru's `arc/go.mod`): the
 * root's `go test ./...` does not test it, and init and doctor say so.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProcessRunner } from '../../src/process/runner.js';
import {
  untestedGoModules,
  untestedGoModulesAt,
  untestedGoModulesOf,
  untestedGoModulesText,
} from '../../src/verify/go-modules.js';
import { runTests } from '../../src/verify/run-tests.js';
import { toolchain } from '../support/toolchains.js';
import { makeProject } from './helpers.js';

const MODULES: Record<string, string> = {
  'go.mod': 'module example.com/cache/v2\n\ngo 1.19\n',
  'lru.go': 'package cache\n',
  'arc/go.mod': 'module example.com/cache/arc/v2\n\ngo 1.18\n',
  'arc/arc.go': 'package arc\n',
  'internal/list.go': 'package internal\n',
  'vendor/example.com/x/go.mod': 'module example.com/x\n',
  'testdata/fixture/go.mod': 'module fixture\n',
};

describe('untestedGoModules', () => {
  it('names the nested modules `go test ./...` at the root leaves out, not vendored or test data ones', async () => {
    const root = await makeProject(MODULES);
    expect(await untestedGoModules(root, 'go test ./...')).toEqual(['arc']);
    expect(await untestedGoModules(root, 'go test -race ./...')).toEqual(['arc']);
    // A command that names the nested module too, a module of its own, or another runner.
    expect(await untestedGoModules(root, 'go test ./... ./arc/...')).toEqual([]);
    expect(await untestedGoModules(root, 'cd arc && go test ./...')).toEqual([]);
    expect(await untestedGoModules(root, 'npm test')).toEqual([]);
  });

  it('says how to test them in the same run, from the repository root', () => {
    const { detail, hint } = untestedGoModulesText(['arc']);
    expect(detail).toBe(
      'arc/ is a Go module of its own, which `go test ./...` here does not test: a change there passes untested',
    );
    // Without a go.work, `go test ./... ./arc/...` would fail: each module from its own directory.
    expect(hint).toContain('[test] command = "go test ./... && (cd arc && go test ./...)"');
    // The main module in a subdirectory: the command starts there, as the test command did.
    expect(untestedGoModulesText(['svc/arc'], { dir: 'svc', workspace: null }).hint).toContain(
      '[test] command = "cd svc && go test ./... && (cd arc && go test ./...)"',
    );
    // A go.work that uses it: one `go test` names both; one that does not is told to.
    expect(untestedGoModulesText(['arc'], { dir: '.', workspace: ['.', 'arc'] }).hint).toContain(
      '[test] command = "go test ./... ./arc/..."',
    );
    const unused = untestedGoModulesText(['arc'], { dir: '.', workspace: ['.'] }).hint;
    expect(unused).toContain('`go work use ./arc`');
    expect(unused).toContain('[test] command = "go test ./... ./arc/..."');
  });
});

const go = toolchain('go');

/** A module with a test, at `dir` (`.` for the root), whose test passes. */
function goModule(dir: string, name: string): Record<string, string> {
  const at = (file: string) => (dir === '.' ? file : `${dir}/${file}`);
  return {
    [at('go.mod')]: `module example.com/${name}\n\ngo 1.18\n`,
    [at(`${name}.go`)]: `package ${name}\n\nfunc Name() string { return "${name}" }\n`,
    [at(`${name}_test.go`)]:
      `package ${name}\n\nimport "testing"\n\nfunc TestName(t *testing.T) {\n\tif Name() != "${name}" {\n\t\tt.Fatal("bad")\n\t}\n}\n`,
  };
}

describe.skipIf(go.missing)(`the hint's command, run as it is from the repository root (real go)${go.note}`, () => {
  const shapes: Array<[string, Record<string, string>, string]> = [
    ['a nested module, no go.work', { ...goModule('.', 'cache'), ...goModule('arc', 'arc') }, 'go test ./...'],
    [
      'the main module in a subdirectory, with one nested',
      { 'README.md': '# svc\n', ...goModule('svc', 'svc'), ...goModule('svc/arc', 'arc') },
      'cd svc && go test ./...',
    ],
    [
      'a go.work that uses both',
      {
        ...goModule('.', 'cache'),
        ...goModule('arc', 'arc'),
        'go.work': 'go 1.18\n\nuse (\n\t.\n\t./arc // the ARC cache\n)\n',
      },
      'go test ./...',
    ],
    [
      'a go.work that uses only the root module',
      { ...goModule('.', 'cache'), ...goModule('arc', 'arc'), 'go.work': 'go 1.18\n\nuse .\n' },
      'go test ./...',
    ],
  ];

  it.each(shapes)(
    '%s: the command tests every module, and leaves none untested',
    async (_shape, files, detected) => {
      const root = await makeProject(files);
      const env = {
        GOCACHE: path.join(root, '.gocache'),
        GOPATH: path.join(root, '.gopath'),
        GOTOOLCHAIN: 'local',
      };
      const { modules, place } = await untestedGoModulesAt(root, detected);
      expect(modules).toHaveLength(1);
      const { hint } = untestedGoModulesText(modules, place);
      const command = z.string().parse(JSON.parse(/\[test\] command = ("(?:[^"\\]|\\.)*")/.exec(hint)?.[1] ?? '""'));
      // A go.work to complete first: that command, pasted as it is, from the root.
      const first = /`([^`]*go work use[^`]*)`/.exec(hint)?.[1];
      if (first !== undefined) execFileSync('sh', ['-c', first], { cwd: root, env: { ...process.env, ...env } });
      const result = await runTests({
        command,
        framework: 'go',
        cwd: root,
        runner: createProcessRunner(),
        timeoutMs: 240_000,
        reportDir: path.join(root, '.r'),
        env,
      });
      expect(result.exitCode, result.output).toBe(0);
      expect(result.tests.map((test) => [test.id, test.status]).sort()).toEqual([
        ['example.com/arc::TestName', 'passed'],
        [`example.com/${modules[0]?.startsWith('svc') === true ? 'svc' : 'cache'}::TestName`, 'passed'],
      ]);
      expect(await untestedGoModules(root, command)).toEqual([]);
    },
    300_000,
  );
});

describe('untestedGoModulesOf', () => {
  it('names the nested modules no verifier command tests, relative to the root', async () => {
    const root = await makeProject(MODULES);
    expect(await untestedGoModulesOf(root, ['go test ./...', 'go vet ./...'])).toEqual(['arc']);
    // Another command of the verifier tests it: left out by none.
    expect(await untestedGoModulesOf(root, ['go test ./...', 'cd arc && go test ./...'])).toEqual([]);
    expect(await untestedGoModulesOf(root, ['go test ./... ./arc/...'])).toEqual([]);
    // No Go tests at all: nothing to say.
    expect(await untestedGoModulesOf(root, ['npm test'])).toEqual([]);
  });
});
