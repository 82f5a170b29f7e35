import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { runDirectory } from '../support/refactor-harness.js';
import { REFACTOR_FILES, stageOf } from '../support/refactor-js-fixture.js';
import { PACKAGE_ROOT, describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

/**
 * The formatting-only pass of `ratchet refactor run` (seed 002, 11.2 step 1 and 17.3) with the
 * real prettier as the configured formatter: it runs first, instead of the patcher; files whose
 * syntax prettier would change (`new Date` -> `new Date()`) and files out of scope (`dist/`) are
 * restored; the rest is verified and checkpointed. The run also has a tiny max runtime, so it
 * stops before the next batch: the final full verifier still runs on what it leaves, and the
 * batch never started is in TASK_LEDGER.jsonl.
 */

const PRETTIER = join(PACKAGE_ROOT, 'node_modules', '.bin', 'prettier');
const LEGACY = 'export const stamp = () => new Date;\n';
const BUNDLE = "export const bundled = 'x'\n";

interface JsonEvent {
  type: string;
  runId?: string;
  batch?: string;
  outcome?: string;
  stage?: string;
  phase?: string;
  kind?: string;
  files?: string[];
  violations?: string[];
  message?: string;
}

function jsonEvents(stdout: string): JsonEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JsonEvent);
}

/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`ratchet refactor run with a formatter (formatting-only batch)${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  const repos: TempRepo[] = [];
  const env = (repo: TempRepo): Record<string, string> => ({
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-refactor-format-000000000',
    RATCHET_HOME: repo.path('ratchet-home'),
  });

  /** A fresh repository with the fixture and these refactor settings. */
  async function createRepo(settings: Record<string, unknown>): Promise<TempRepo> {
    const repo = await createTempRepo({
      files: {
        ...REFACTOR_FILES,
        'src/legacy.js': LEGACY,
        'dist/bundle.js': BUNDLE,
        // The repository's own prettier settings (so none from a parent directory apply).
        '.prettierrc': '{ "singleQuote": false, "semi": true }\n',
        '.refactor-bot.config.json': `${JSON.stringify({ formatter: [`${PRETTIER} --write .`], fast_verifier: ['node --test'], full_verifier: ['node --test'], max_runtime_minutes: 0.0001, ...settings })}\n`,
      },
    });
    repos.push(repo);
    return repo;
  }

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    server.setFallback((request) =>
      stageOf(request) === 'Stage: PATCHER'
        ? {
            kind: 'message',
            content: [
              {
                type: 'tool_use',
                name: 'StructuredOutput',
                input: {
                  status: 'noop',
                  rationale: 'nothing',
                  risk_notes: [],
                  patch_unified_diff: '',
                  touched_files: [],
                  expected_verifier: [],
                },
              },
            ],
          }
        : { kind: 'message', content: [{ type: 'text', text: 'The heuristic plan is fine.' }] },
    );
  });

  afterAll(async () => {
    await server.close();
    for (const repo of repos) await repo.cleanup();
  });

  it('refactor plan shows the formatting-only batch first, as run plans it', async () => {
    const fixture = await createRepo({});
    const result = await runCli(['refactor', 'plan', '--json'], { cwd: fixture.dir, env: env(fixture) });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const plan = JSON.parse(result.stdout) as { batches: { id: string; allowed_operations: string[] }[] };
    expect(plan.batches[0]).toMatchObject({ id: 'batch-001', allowed_operations: ['format'] });
    expect(plan.batches.length).toBeGreaterThan(1);

    const plain = await runCli(['refactor', 'plan'], { cwd: fixture.dir, env: env(fixture) });
    expect(plain.stdout).toMatch(/^ {2}batch-001 Format the code with the configured formatter \(formatting-only\)$/m);
  });

  it('refactor plan plans no batch on a file a verifier command names (admission would refuse every patch to it)', async () => {
    const fixture = await createRepo({ formatter: [], full_verifier: ['node --test', 'node --check src/math.js'] });
    const result = await runCli(['refactor', 'plan', '--json'], { cwd: fixture.dir, env: env(fixture) });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const plan = JSON.parse(result.stdout) as { batches: { goal: string; scope_globs: string[] }[] };
    expect(plan.batches.flatMap((batch) => batch.scope_globs)).not.toContain('src/math.js');
    expect(plan.batches.map((batch) => batch.goal).join('\n')).not.toContain('src/math.js');

    // Without that command the same file gets its batches.
    const other = await createRepo({ formatter: [] });
    const before = await runCli(['refactor', 'plan', '--json'], { cwd: other.dir, env: env(other) });
    const unguarded = JSON.parse(before.stdout) as { batches: { scope_globs: string[] }[] };
    expect(unguarded.batches.flatMap((batch) => batch.scope_globs)).toContain('src/math.js');
  });

  it('formats first, keeps only formatting-only changes in scope, then stops on the max runtime after a final full verification', async () => {
    const fixture = await createRepo({});
    const repo = fixture.dir;
    const result = await runCli(
      [
        'refactor',
        'run',
        repo,
        '--provider',
        'anthropic',
        '--model',
        'claude-refactor-e2e',
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      { cwd: repo, env: env(fixture) },
    );
    // Stopped by the max runtime: a failed run (exit 1) whose checkpoints stand.
    expect(result.exitCode, describeResult(result)).toBe(1);
    const events = jsonEvents(result.stdout);
    const runId = events.find((event) => event.type === 'run-start')?.runId ?? '';
    expect(
      events
        .filter((event) => event.type === 'batch-end')
        .map((event) => `${event.batch ?? ''} ${event.outcome ?? ''}`),
    ).toEqual(['batch-001 committed']);
    expect(
      events.some((event) => event.type === 'verify-end' && event.stage === 'FORMAT' && event.kind === 'format'),
    ).toBe(true);
    // No model was asked to patch the formatting batch.
    expect(server.requests.filter((request) => stageOf(request) === 'Stage: PATCHER')).toEqual([]);

    const check = events.find((event) => event.type === 'patch-check');
    expect(check?.files).toEqual(expect.arrayContaining(['src/app.js', 'test/app.test.js']));
    expect(check?.files).not.toContain('src/legacy.js');
    expect(check?.violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^src\/legacy\.js: not formatting-only: the syntax changed at line 1/),
        'dist/bundle.js: outside the batch scope',
      ]),
    );

    const branch = `ratchet/${runId}`;
    const show = (path: string): string => fixture.run('show', `${branch}:${path}`);
    expect(fixture.run('log', '--format=%s', `main..${branch}`)).toBe(
      'checkpoint: batch-001 Format the code with the configured formatter (formatting-only)',
    );
    expect(show('src/app.js')).toContain('import { add, mul } from "./math.js";');
    expect(show('src/legacy.js')).toBe(LEGACY.trim());
    expect(show('dist/bundle.js')).toBe(BUNDLE.trim());
    expect(fixture.run('log', '-1', '--format=%b', branch)).toContain('src/legacy.js: not formatting-only');

    // Stopped before batch-002, after the final full verifier passed on the formatted checkpoint.
    const runEnd = events.find((event) => event.type === 'run-end');
    expect(runEnd?.message).toMatch(/^the max runtime of 0\.0001 minutes was exceeded .*: stopped before batch-002/);
    const finalVerify = events.filter(
      (event) => event.type === 'stage-end' && event.stage === 'FULL_VERIFY' && event.phase === 'SETUP',
    );
    expect(finalVerify.map((event) => event.outcome)).toEqual(['accepted']);
    const ledger = (await readFile(join(runDirectory(repo, runId), 'artifacts', 'TASK_LEDGER.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { batch: string; outcome: string });
    const planned = events.find((event) => event.type === 'plan-create') as { batches?: number } | undefined;
    expect(planned?.batches).toBeGreaterThan(1);
    expect(ledger.map((entry) => `${entry.batch} ${entry.outcome}`)).toEqual([
      'batch-001 committed',
      ...Array.from(
        { length: (planned?.batches ?? 0) - 1 },
        (_, index) => `batch-${String(index + 2).padStart(3, '0')} not-started`,
      ),
    ]);

    const report = await readFile(join(runDirectory(repo, runId), 'report.md'), 'utf8');
    expect(report).toContain('### Formatter changes not kept (restored)');
    expect(report).toMatch(/^- batch-001: src\/legacy\.js: not formatting-only/m);

    // The user's checkout is untouched until accept; accept --force takes the formatted checkpoint.
    expect(await readFile(join(repo, 'src', 'app.js'), 'utf8')).toBe(REFACTOR_FILES['src/app.js']);
    const accepted = await runCli(['accept', runId, '--force'], { cwd: repo, env: env(fixture) });
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(await readFile(join(repo, 'src', 'app.js'), 'utf8')).toContain('"./math.js"');
    expect(await readFile(join(repo, 'src', 'legacy.js'), 'utf8')).toBe(LEGACY);
  });

  it('takes the branch back to the newest fully verified checkpoint when the final full verifier fails', async () => {
    // The full verifier refuses double quotes in src/app.js: the formatted checkpoint passes the
    // fast verifier only.
    const noDoubleQuotes = `node -e "process.exit(require('fs').readFileSync('src/app.js','utf8').includes(String.fromCharCode(34)) ? 1 : 0)"`;
    const fixture = await createRepo({ full_verifier: ['node --test', noDoubleQuotes] });
    const repo = fixture.dir;
    const base = fixture.run('rev-parse', 'HEAD');
    const result = await runCli(
      [
        'refactor',
        'run',
        repo,
        '--provider',
        'anthropic',
        '--model',
        'claude-refactor-e2e',
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      { cwd: repo, env: env(fixture) },
    );
    expect(result.exitCode, describeResult(result)).toBe(1);
    const events = jsonEvents(result.stdout);
    const runId = events.find((event) => event.type === 'run-start')?.runId ?? '';
    expect(
      events
        .filter((event) => event.type === 'batch-end')
        .map((event) => `${event.batch ?? ''} ${event.outcome ?? ''}`),
    ).toEqual(['batch-001 committed']);
    expect(
      events
        .filter((event) => event.type === 'stage-end' && event.stage === 'FULL_VERIFY')
        .map((event) => event.outcome),
    ).toEqual(['rejected']);
    expect(events.find((event) => event.type === 'checkpoint-rollback')).toMatchObject({
      stage: 'FULL_VERIFY',
      to: base,
      reason: 'the final full verifier failed',
    });
    expect(events.find((event) => event.type === 'run-end')?.message).toMatch(
      new RegExp(`stopped before batch-002 .*; the final full verifier failed; reset to ${base.slice(0, 8)}$`),
    );
    expect(fixture.run('rev-parse', `ratchet/${runId}`)).toBe(base);
  });
});
