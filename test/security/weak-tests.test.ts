/**
 * A model that games RED with tests that fail for the wrong reason: one that asserts nothing (its
 * stub throws an AssertionError, so the gate sees a failure "by assertion"), one padded with an
 * assertion that cannot fail, one that never imports the implementation and compares literals,
 * one that asserts nothing behind a comment before its title (tree-sitter's reader took the
 * comment for the title and saw no test at all). Each passes RED's gate; the static review of test quality after RED (seed 000) must refuse it,
 * send it back to RED_FIX with what is wrong, and keep it out of every commit, in `ratchet tdd`
 * and in each task of `ratchet tasks run`, driven through the built CLI and the real Anthropic
 * adapter against a loopback fake. Nothing outside the run may change.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  ratchetEnv,
  type CheckoutState,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { bodySchema, textOf } from '../support/anthropic-request.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile, type BrainTask } from '../support/tasks-brain.js';

const sandbox = sandboxForThisMachine();

const HEAD = (name: string): string =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from '../src/${name}.js';\n`;

/** Asserts nothing: the stub's `assert.fail` is what fails. */
const noAssertion = (task: ReturnType<typeof letterTask>): BrainTask & { dependsOn: string[] } => ({
  ...task,
  weakTest: `${HEAD('a')}test('a returns A', () => {\n  a();\n});\n`,
  weakStub: `import assert from 'node:assert/strict';\nexport function a() {\n  assert.fail('not yet');\n}\n`,
});
/** Padded with an assertion that holds whatever the code does. */
const alwaysTrue = (task: ReturnType<typeof letterTask>): BrainTask & { dependsOn: string[] } => ({
  ...task,
  weakTest: `${HEAD('b')}test('b returns B', () => {\n  assert.ok(true);\n  assert.equal(b(), 'B');\n});\n`,
});
/** Tests nothing of the task: never imports the implementation, compares two literals. */
const testsNothing = (task: ReturnType<typeof letterTask>): BrainTask & { dependsOn: string[] } => ({
  ...task,
  weakTest: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('c returns C', () => {\n  assert.equal('', 'C');\n});\n`,
});

/** Asserts nothing, and hides it: a comment before the title. */
const hiddenTitle = (task: ReturnType<typeof letterTask>): BrainTask & { dependsOn: string[] } => ({
  ...task,
  weakTest: `${HEAD('d')}test(/* the letter */ 'd returns D', () => {\n  d();\n});\n`,
  weakStub: `import assert from 'node:assert/strict';\nexport function d() {\n  assert.fail('not yet');\n}\n`,
});

const StageEndSchema = z.object({
  type: z.literal('stage-end'),
  stage: z.string(),
  attempt: z.number(),
  outcome: z.string(),
  reason: z.string().optional(),
  task: z.string().optional(),
});

interface Driven {
  result: CliResult;
  reviews: Array<z.infer<typeof StageEndSchema>>;
  runId: string;
  before: CheckoutState;
  after: CheckoutState;
}

async function drive(repo: ProjectRepo, server: FakeAnthropicServer, args: string[]): Promise<Driven> {
  const before = checkoutState(repo);
  const result = await runCli([...args, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--refactor', 'never', '--json'], {
    cwd: repo.dir,
    env: ratchetEnv(repo, server),
    timeoutMs: 300_000,
  });
  const events = parseNdjson(result.stdout);
  const reviews = events.flatMap((event) => {
    const parsed = StageEndSchema.safeParse(event);
    return parsed.success && parsed.data.stage === 'REVIEW_TESTS' ? [parsed.data] : [];
  });
  const runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
  return { result, reviews, runId, before, after: checkoutState(repo) };
}

/** The RED_FIX prompts the model was sent, per task key. */
function redFixPrompts(server: FakeAnthropicServer, key: string): string[] {
  return server.requests.flatMap((request) => {
    const body = bodySchema.safeParse(request.body);
    if (!body.success || !/^Stage: RED_FIX/.test(textOf(body.data.system))) return [];
    const prompt = textOf(body.data.messages[0]?.content);
    return prompt.includes(`test/${key.toLowerCase()}.test.js`) ? [prompt] : [];
  });
}

describe('weak tests that pass RED’s gate are refused by the static review of test quality', () => {
  const TASKS = [
    noAssertion(letterTask('A', 'A')),
    alwaysTrue(letterTask('B', 'B')),
    testsNothing(letterTask('C', 'C')),
    hiddenTitle(letterTask('D', 'D')),
  ];
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let tasks: Driven;
  let tdd: Driven;
  const brain = createTasksBrain(TASKS);

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    await writeFile(join(repo.root, 'tasks.json'), tasksFile(TASKS));
    tasks = await drive(repo, server, ['tasks', 'run', join(repo.root, 'tasks.json'), '--workers', '3']);
    tdd = await drive(repo, server, ['tdd', 'Task A: a function a() in src/a.js that returns A']);
  }, 620_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('ratchet tasks run: each weak test goes back to RED_FIX with what is wrong, and every task still merges', () => {
    expect(tasks.result.exitCode, describeResult(tasks.result)).toBe(0);
    expect(brain.unexpected).toEqual([]);
    const byTask = (key: string): string[] =>
      tasks.reviews
        .filter((review) => review.task === key)
        .map((review) => `${review.attempt} ${review.outcome}${review.reason ? ` ${review.reason}` : ''}`);
    expect(byTask('A')).toEqual(['1 rejected no-assertion', '2 accepted']);
    expect(byTask('B')).toEqual(['1 rejected constant-assertion', '2 accepted']);
    expect(byTask('C')).toEqual(['1 rejected constant-assertion, unit-not-used', '2 accepted']);
    expect(byTask('D')).toEqual(['1 rejected no-assertion', '2 accepted']);
    expect(redFixPrompts(server, 'A')[0]).toMatch(
      /test\/a\.test\.js:4 \(no-assertion\) The test "a returns A" asserts nothing/,
    );
    expect(redFixPrompts(server, 'B')[0]).toMatch(/\(constant-assertion\) The assertion `assert\.ok\(true\)`/);
    expect(redFixPrompts(server, 'C')[0]).toMatch(/\(unit-not-used\) test\/c\.test\.js does not import src\/c\.js/);
    expect(redFixPrompts(server, 'D')[0]).toMatch(/test\/d\.test\.js:4 \(no-assertion\) The test "d returns D"/);
  });

  it('keeps every weak test out of every commit of both runs', () => {
    for (const run of [tasks, tdd]) {
      const history = repo.run('log', '-p', '--all', '--format=%H', `--glob=refs/heads/ratchet/${run.runId}*`);
      expect(history).toContain("assert.equal(a(), 'A')");
      expect(history).not.toContain('assert.ok(true)');
      expect(history).not.toContain("assert.fail('not yet')");
      expect(history).not.toContain("assert.equal('', 'C')");
      expect(history).not.toContain('/* the letter */');
    }
  });

  it('ratchet tdd: the same review runs after RED and sends the weak test back', () => {
    expect(tdd.result.exitCode, describeResult(tdd.result)).toBe(0);
    expect(tdd.reviews.map((review) => `${review.attempt} ${review.outcome} ${review.reason ?? ''}`.trim())).toEqual([
      '1 rejected no-assertion',
      '2 accepted',
    ]);
  });

  it("left the user's checkout as it was", () => {
    expect(tasks.after).toEqual(tasks.before);
    expect(tdd.after).toEqual(tdd.before);
    expect(existsSync(join(repo.dir, 'src', 'a.js'))).toBe(false);
  });
});
