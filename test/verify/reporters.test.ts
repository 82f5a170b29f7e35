import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Framework } from '../../src/verify/detect.js';
import { planReporter } from '../../src/verify/reporters.js';
import { makeProject } from './helpers.js';

async function plan(command: string, framework: Framework, files: Record<string, string> = {}) {
  const cwd = await makeProject(files);
  return planReporter({ command, framework, cwd, reportDir: path.join(cwd, '.r'), env: {} });
}

const pkg = (test: string): string => JSON.stringify({ name: 'x', scripts: { test } });

describe('planReporter: unittest -v', () => {
  it.each([
    ['python3 -m unittest', 'python3 -m unittest -v'],
    ['python3 -m unittest tests.test_a', 'python3 -m unittest -v tests.test_a'],
    // `-m unittest -v discover` is a usage error: discovery takes -v after `discover`.
    ['python3 -m unittest discover -s tests -t .', 'python3 -m unittest discover -v -s tests -t .'],
    ['python -m  unittest   discover', 'python -m  unittest   discover -v'],
    ['cd backend && python3 -m unittest discover tests', 'cd backend && python3 -m unittest discover -v tests'],
    ['python3 -m unittest discover -v -s tests', 'python3 -m unittest discover -v -s tests'],
    ['python3 -m unittest --verbose', 'python3 -m unittest --verbose'],
    // Not `-m unittest` itself: left alone rather than broken.
    ['python3 -m unittest.mock_runner', 'python3 -m unittest.mock_runner'],
  ])('%s -> %s', async (command, expected) => {
    expect((await plan(command, 'unittest')).command).toBe(expected);
  });
});

describe('planReporter: mocha', () => {
  const TAP = '--reporter tap --reporter-option tapVersion=13';

  it('appends the TAP reporter to a bare mocha call and to `npm test` whose script is one', async () => {
    expect((await plan('npx mocha test/', 'mocha')).command).toBe(`npx mocha test/ ${TAP}`);
    expect((await plan('npm test', 'mocha', { 'package.json': pkg('mocha --recursive') })).command).toBe(
      `npm test -- ${TAP}`,
    );
  });

  it('overrides a reporter the command or .mocharc chose: mocha takes the last --reporter', async () => {
    // body-parser's and express's `npm test` (issue 11, finding 9).
    expect((await plan('mocha --reporter dot', 'mocha')).command).toBe(`mocha --reporter dot ${TAP}`);
    expect((await plan('mocha -R spec', 'mocha')).command).toBe(`mocha -R spec ${TAP}`);
    const express = pkg('mocha --require test/support/env --reporter spec --check-leaks test/ test/acceptance/');
    expect((await plan('npm test', 'mocha', { 'package.json': express })).command).toBe(`npm test -- ${TAP}`);
    const rc = { '.mocharc.yml': 'reporter: dot\n', 'package.json': pkg('mocha') };
    expect((await plan('npm test', 'mocha', rc)).command).toBe(`npm test -- ${TAP}`);
  });

  it('reaches mocha inside a longer command line through MOCHA_OPTIONS, unless the line names a reporter', async () => {
    const compound = await plan('npm test', 'mocha', { 'package.json': pkg('mocha && echo done') });
    expect(compound).toMatchObject({ command: 'npm test', env: { MOCHA_OPTIONS: TAP } });
    expect(compound.unreadable).toBeUndefined();
    expect(await plan('nyc mocha', 'mocha')).toMatchObject({ command: 'nyc mocha', env: { MOCHA_OPTIONS: TAP } });
    // The command line beats MOCHA_OPTIONS: such a script cannot be read.
    const chosen = await plan('npm test', 'mocha', { 'package.json': pkg('mocha --reporter spec && echo done') });
    expect(chosen.unreadable?.cause).toContain('inside a shell command line');
    expect(chosen.unreadable?.hint).toContain('npx mocha');
  });
});

describe('planReporter: ava', () => {
  it('appends --tap to a bare ava call; a longer command line cannot be read', async () => {
    expect((await plan('npm test', 'ava', { 'package.json': pkg('ava --verbose') })).command).toBe('npm test -- --tap');
    expect((await plan('npx ava', 'ava')).command).toBe('npx ava --tap');
    expect((await plan('npm test', 'ava', { 'package.json': pkg('xo && ava') })).unreadable?.hint).toContain('npx ava');
  });
});

describe('planReporter: runners whose reporter cannot be added', () => {
  it('says why, and what to configure', async () => {
    const jest = await plan('npm test', 'jest', { 'package.json': pkg('jest && eslint .') });
    expect(jest.unreadable?.cause).toMatch(/runs jest inside a shell command line/);
    expect((await plan('npm test', 'jest', { 'package.json': pkg('jest --json && x') })).unreadable).toBeUndefined();
    expect((await plan('cross-env NODE_ENV=test jest', 'jest')).command).toMatch(/ --json --outputFile=/);
    const spec = await plan('npm test', 'node-test', { 'package.json': pkg('node --test --test-reporter=spec') });
    expect(spec.unreadable?.hint).toContain('Remove --test-reporter');
    const tap = await plan('npm test', 'node-test', { 'package.json': pkg('node --test --test-reporter=tap') });
    expect(tap.unreadable).toBeUndefined();
  });
});

describe('planReporter: commands that set variables or change directory first', () => {
  it('appends vitest and jest reporters after leading variable assignments', async () => {
    const vitest = await plan('NODE_ENV=test vitest run', 'vitest');
    expect(vitest.command).toMatch(/^NODE_ENV=test vitest run --reporter=default --reporter=json --outputFile\.json=/);
    expect(vitest.report.kind).toBe('jest-json-file');
    const jest = await plan('npm test', 'jest', { 'package.json': pkg('CI=1 jest --ci') });
    expect(jest.command).toMatch(/^npm test -- --json --outputFile=/);
  });

  it('plans `cd <dir> && <command>` as the command run in that directory', async () => {
    const files = { 'frontend/package.json': pkg('vitest run') };
    const vitest = await plan('cd frontend && npm test', 'vitest', files);
    expect(vitest.command).toMatch(/^cd frontend && npm test -- --reporter=default --reporter=json /);
    // The script is read from frontend/package.json, not from the root (which has none).
    expect(
      (await plan('cd frontend && npm test', 'vitest', { 'frontend/package.json': pkg('vitest && x') })).command,
    ).toBe('cd frontend && npm test');
    expect((await plan('cd gosvc && go test ./...', 'go')).command).toBe('cd gosvc && go test -json ./...');
    // Each module's `go test` of a chain (a nested module tested from its own directory).
    expect((await plan('go test ./... && (cd arc && go test ./...)', 'go')).command).toBe(
      'go test -json ./... && (cd arc && go test -json ./...)',
    );
    expect((await plan("cd 'my crate' && cargo test", 'cargo')).command).toBe(
      "cd 'my crate' && cargo test --no-fail-fast",
    );
    expect((await plan('cd a && cd b && cargo test', 'cargo')).command).toBe(
      'cd a && cd b && cargo test --no-fail-fast',
    );
    const node = await plan('cd frontend && npm test', 'node-test', { 'frontend/package.json': pkg('node --test') });
    expect(node.command).toBe('cd frontend && npm test');
    expect(node.env.NODE_OPTIONS).toMatch(/--test-reporter=file:\/\/\/\S+\/node-test-reporter\.mjs /);
    expect(node.env.NODE_OPTIONS).toContain('--test-reporter-destination=stderr');
    expect(node.report).toEqual({ kind: 'junit-stderr' });
    expect(node.supportFiles).toEqual([
      {
        file: expect.stringMatching(/^\/.*\/node-test-reporter\.mjs$/) as unknown,
        content: expect.any(String) as unknown,
      },
    ]);
  });

  it('does not treat `cd $DIR && ...` or a cd that is not first as a subproject', async () => {
    expect((await plan('cd $DIR && go test ./...', 'go')).command).toBe('cd $DIR && go test ./...');
    expect((await plan('make build && cd x && go test ./...', 'go')).command).toBe(
      'make build && cd x && go test ./...',
    );
  });
});
