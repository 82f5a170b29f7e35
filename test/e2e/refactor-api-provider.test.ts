import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type AnthropicReply, type FakeAnthropicServer, type RecordedRequest } from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';

/**
 * `ratchet refactor run` on an API provider: our own tool loop returns the PatchResponse as
 * structured output (the StructuredOutput tool), through the real Anthropic adapter.
 */
const MATH = `export function add(a, b) {
  return a + b;
}

function unusedHelper(x) {
  return x * 2;
}

export function mul(a, b) {
  let result = 0;
  for (let i = 0; i < b; i++) result = add(result, a);
  return result;
}
`;

const APP = `import { add, mul } from './math.js';

export function total(xs) {
  return xs.reduce((sum, x) => add(sum, mul(x, 1)), 0);
}
`;

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { total } from '../src/app.js';

test('total', () => assert.equal(total([1, 2, 3]), 6));
`;

const REMOVE_DEAD_CODE = `diff --git a/src/math.js b/src/math.js
--- a/src/math.js
+++ b/src/math.js
@@ -2,10 +2,6 @@ export function add(a, b) {
   return a + b;
 }
 
-function unusedHelper(x) {
-  return x * 2;
-}
-
 export function mul(a, b) {
   let result = 0;
   for (let i = 0; i < b; i++) result = add(result, a);
`;

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return (value as unknown[]).map((block) => (typeof block === 'object' && block !== null && 'text' in block ? String((block).text) : '')).join('\n');
  }
  return '';
}

function stageOf(request: RecordedRequest): string {
  const body = request.body as { system?: unknown };
  return text(body.system).split('\n')[0] ?? '';
}

function lastUser(request: RecordedRequest): string {
  const body = request.body as { messages?: Array<{ role: string; content: unknown }> };
  const users = (body.messages ?? []).filter((message) => message.role === 'user');
  return text(users[0]?.content);
}

function brain(request: RecordedRequest): AnthropicReply {
  const stage = stageOf(request);
  if (stage === 'Stage: PLANNER') return { kind: 'message', content: [{ type: 'text', text: 'The heuristic plan is fine.' }] };
  if (stage === 'Stage: PATCHER') {
    const prompt = lastUser(request);
    const patch = prompt.includes('# Batch batch-001')
      ? { status: 'ok', rationale: 'unusedHelper is never called.', risk_notes: [], patch_unified_diff: REMOVE_DEAD_CODE, touched_files: ['src/math.js'], expected_verifier: ['npm test'] }
      : { status: 'noop', rationale: 'Nothing worth changing safely.', risk_notes: [], patch_unified_diff: '', touched_files: [], expected_verifier: [] };
    return { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: patch }] };
  }
  return { kind: 'message', content: [{ type: 'text', text: 'ok' }] };
}

describe('ratchet refactor run on an API provider (tool loop, structured PatchResponse)', () => {
  let server: FakeAnthropicServer;
  let dir: string;
  let repo: string;
  let home: string;

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    server.setFallback(brain);
    dir = await mkdtemp(join(tmpdir(), 'ratchet-refactor-api-'));
    repo = join(dir, 'repo');
    home = join(dir, 'home');
    await mkdir(join(repo, 'src'), { recursive: true });
    await mkdir(join(repo, 'test'), { recursive: true });
    await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'rf', type: 'module', scripts: { test: 'node --test' } }, null, 2));
    await writeFile(join(repo, 'src', 'math.js'), MATH);
    await writeFile(join(repo, 'src', 'app.js'), APP);
    await writeFile(join(repo, 'test', 'app.test.js'), TEST);
    const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], { cwd: repo, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'init');
  });

  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('commits the admitted, verified patch as a checkpoint and writes the report', async () => {
    const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-refactor-api-0000000000', RATCHET_HOME: home };
    const result = await runCli(['refactor', 'run', repo, '--provider', 'anthropic', '--model', 'claude-refactor-e2e', '--yes', '--json'], { cwd: repo, env });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const events = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; runId?: string; batch?: string; outcome?: string; admitted?: boolean; html?: string });
    const runId = events.find((event) => event.type === 'run-start')?.runId ?? '';
    expect(runId).not.toBe('');
    const ends = events.filter((event) => event.type === 'batch-end').map((event) => `${event.batch ?? ''} ${event.outcome ?? ''}`);
    expect(ends).toEqual(['batch-001 committed', 'batch-002 noop']);
    expect(events.some((event) => event.type === 'patch-check' && event.admitted === true)).toBe(true);

    const branch = `ratchet/${runId}`;
    const subjects = execFileSync('git', ['log', '--format=%s', `main..${branch}`], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    expect(subjects).toEqual(['checkpoint: batch-001 Remove dead code in src/math.js']);
    const changed = execFileSync('git', ['show', `${branch}:src/math.js`], { cwd: repo, encoding: 'utf8' });
    expect(changed).not.toContain('unusedHelper');
    // The user's checkout is untouched until accept.
    expect(await readFile(join(repo, 'src', 'math.js'), 'utf8')).toBe(MATH);
    // The patcher was asked through our tool loop, with the StructuredOutput tool and read-only tools.
    const patcherRequest = server.requests.find((request) => stageOf(request) === 'Stage: PATCHER');
    const tools = ((patcherRequest?.body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);
    expect(tools).toContain('StructuredOutput');
    const report = events.find((event) => event.type === 'report');
    expect(report?.html).toBeDefined();
    const html = await readFile(report?.html ?? '', 'utf8');
    expect(html).toContain('batch-001');

    const accepted = await runCli(['accept', runId], { cwd: repo, env });
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(await readFile(join(repo, 'src', 'math.js'), 'utf8')).not.toContain('unusedHelper');
  });
});
