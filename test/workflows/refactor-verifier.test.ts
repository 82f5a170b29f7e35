/**
 * The refactor run's verifier commands on a real node:test project: a test runner Ratchet reads
 * runs as the TDD gates run it (failing tests named), and a batch that deletes or skips a test
 * that passed at the baseline fails the verifier even though the suite exits 0.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/core/redact.js';
import { createCommandVerifier } from '../../src/workflows/refactor/verifier.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { makeProject } from '../verify/helpers.js';
import type { VerifierRun } from '../../src/workflows/refactor/ports.js';

const TEST = (name: string, body = 'assert.equal(1, 1)'): string =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('${name}', () => { ${body}; });\n`;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function verifierFor(
  root: string,
  fast: string[],
  baseline?: VerifierRun,
): Promise<ReturnType<typeof createCommandVerifier>> {
  const outputDir = await mkdtemp(join(tmpdir(), 'ratchet-verifier-logs-'));
  dirs.push(outputDir);
  return createCommandVerifier({
    cwd: root,
    repoRoot: root,
    outputDir,
    timeoutMs: 60_000,
    runner: createProcessRunner(),
    redact: createRedactor([]),
    fast,
    full: fast,
    ...(baseline ? { baseline } : {}),
  });
}

describe('refactor verifier commands', () => {
  it('names the failing tests of a test runner it reads, and passes or fails by the exit code', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'x', type: 'module', scripts: { test: 'node --test' } }),
      'test/a.test.js': TEST('adds'),
      'test/b.test.js': TEST('subtracts'),
    });
    const verifier = await verifierFor(root, ['npm test', 'node -e "process.exit(0)"']);
    const baseline = await verifier.run('baseline', 'BASELINE');
    expect(baseline.ok).toBe(true);
    expect(baseline.results[0]?.result).toMatchObject({ command: 'npm test', counts: { passed: 2, failed: 0 } });
    // A plain command stays a check: exit code and output only.
    expect(baseline.results[1]?.result).not.toHaveProperty('tests');

    await writeFile(join(root, 'test/b.test.js'), TEST('subtracts', 'assert.equal(1, 2)'));
    const broken = await verifier.run('fast', 'FAST_VERIFY');
    expect(broken.ok).toBe(false);
    const result = broken.results[0]?.result;
    expect(result && 'tests' in result ? result.tests.filter((test) => test.status === 'failed') : []).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/b\.test\.js::subtracts$/) as unknown,
        failureKind: 'assertion',
      }),
    ]);
    expect(broken.results).toHaveLength(1); // Stops at the first failing command.
  });

  it('fails a change after which a test that passed at the baseline no longer runs or is skipped', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'x', type: 'module', scripts: { test: 'node --test' } }),
      'test/a.test.js': TEST('adds'),
      'test/b.test.js': TEST('subtracts'),
    });
    // The run's baseline is taken by the setup's verifier; the batch loop's own verifier is told of it.
    const baseline = await (await verifierFor(root, ['npm test'])).run('baseline', 'BASELINE');
    expect(baseline.ok).toBe(true);
    const verifier = await verifierFor(root, ['npm test'], baseline);

    await rm(join(root, 'test/b.test.js'));
    const deleted = await verifier.run('fast', 'FAST_VERIFY');
    expect(deleted.ok).toBe(false);
    const entry = deleted.results[0];
    const result = entry?.result;
    expect(result?.exitCode).toBe(0);
    expect(result?.ok).toBe(false);
    const failing = result && 'tests' in result ? result.tests.filter((test) => test.status === 'failed') : [];
    expect(failing).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/b\.test\.js::subtracts$/) as unknown,
        failureKind: 'missing',
        message: 'passed at the baseline; skipped or not run after this change',
      }),
    ]);
    expect(result && 'counts' in result ? result.counts : undefined).toMatchObject({ passed: 1, failed: 1 });
    expect(result?.output).toMatch(/these tests passed at the baseline and did not pass now[^]*b\.test\.js::subtracts/);
    // The kept log says so too.
    expect(await readFile(join(root, entry?.outputFile ?? 'missing'), 'utf8')).toContain(
      'a refactoring keeps every test running',
    );

    await writeFile(join(root, 'test/b.test.js'), TEST('subtracts').replace("test('", "test.skip('"));
    const skipped = await verifier.run('full', 'FULL_VERIFY');
    expect(skipped.ok).toBe(false);
    expect(skipped.results[0]?.result.output).toMatch(/b\.test\.js::subtracts/);

    // Restored, and a test added: fine.
    await writeFile(join(root, 'test/b.test.js'), TEST('subtracts'));
    await writeFile(join(root, 'test/c.test.js'), TEST('multiplies'));
    const fine = await verifier.run('fast', 'FAST_VERIFY');
    expect(fine.ok).toBe(true);
    expect(fine.results[0]?.result).toMatchObject({ counts: { passed: 3, failed: 0 } });
  });
});
