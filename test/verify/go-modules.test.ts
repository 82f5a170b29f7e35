/**
 * A Go repository with a module of its own below the root (golang-lru's `arc/go.mod`): the
 * root's `go test ./...` does not test it, and init and doctor say so.
 */
import { describe, expect, it } from 'vitest';
import { untestedGoModules, untestedGoModulesOf, untestedGoModulesText } from '../../src/verify/go-modules.js';
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

  it('says how to test them in the same run', () => {
    const { detail, hint } = untestedGoModulesText(['arc']);
    expect(detail).toBe(
      'arc/ is a Go module of its own, which `go test ./...` here does not test: a change there passes untested',
    );
    expect(hint).toContain('go work init . ./arc');
    expect(hint).toContain('[test] command = "go test ./... ./arc/..."');
  });
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
