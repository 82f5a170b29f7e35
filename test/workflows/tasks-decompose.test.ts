import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPrompts, packageRoot } from '../../src/config/prompts.js';
import { RatchetError } from '../../src/core/errors.js';
import {
  decomposePrompt,
  decomposeSpec,
  type StructuredAnswer,
  type StructuredModelPort,
  type StructuredRequest,
} from '../../src/workflows/tasks/decompose.js';

/** A model that answers from a script, one answer per call, and records what it was asked. */
class ScriptedModel implements StructuredModelPort {
  readonly requests: StructuredRequest<unknown>[] = [];
  constructor(private readonly answers: StructuredAnswer[]) {}

  ask<T>(request: StructuredRequest<T>): Promise<StructuredAnswer> {
    this.requests.push(request);
    const answer = this.answers.shift();
    if (answer === undefined) throw new Error('The scripted model has no more answers.');
    return Promise.resolve(answer);
  }
}

function answer(value: unknown): StructuredAnswer {
  return { value, text: JSON.stringify(value) };
}

const TASK = {
  key: 'TDD-1',
  title: 'Stack',
  goal: 'A stack with push and pop',
  acceptanceCriteria: ['pop returns the last pushed value'],
  testFile: 'test/stack.test.ts',
  implFile: 'src/stack.ts',
};
const VALID = {
  tasks: [
    TASK,
    { ...TASK, key: 'TDD-2', testFile: 'test/queue.test.ts', implFile: 'src/queue.ts', dependsOn: ['TDD-1'] },
  ],
};
const CYCLIC = { tasks: [{ ...TASK, dependsOn: ['TDD-1'] }] };
const SHARED = { tasks: [TASK, { ...TASK, key: 'TDD-2' }] };

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function prompts(override?: string): Promise<ReturnType<typeof decomposePrompt>> {
  const repoRoot = await mkdtemp(join(tmpdir(), 'ratchet-decompose-'));
  dirs.push(repoRoot);
  if (override !== undefined) {
    await mkdir(join(repoRoot, '.ratchet'));
    await writeFile(join(repoRoot, '.ratchet', 'prompts.toml'), override);
  }
  return decomposePrompt(await loadPrompts({ packageRoot: packageRoot(), repoRoot }));
}

async function decompose(model: StructuredModelPort): ReturnType<typeof decomposeSpec> {
  return decomposeSpec(
    {
      spec: 'A stack, then a queue built on it.',
      specFile: 'spec.md',
      repoFiles: ['package.json', 'src/index.ts'],
      prompt: await prompts(),
    },
    model,
  );
}

describe('tasks plan: decomposition', () => {
  it('uses a valid first answer, after one call whose system prompt states the stage', async () => {
    const model = new ScriptedModel([answer(VALID)]);
    const result = await decompose(model);
    expect(result.calls).toBe(1);
    expect(result.corrected).toEqual([]);
    expect(result.file.tasks.map((task) => [task.key, task.dependsOn])).toEqual([
      ['TDD-1', []],
      ['TDD-2', ['TDD-1']],
    ]);
    expect(model.requests).toHaveLength(1);
    const request = model.requests[0];
    expect(request?.stage).toBe('DECOMPOSE');
    expect(request?.system.split('\n')[0]).toBe('Stage: DECOMPOSE');
    expect(request?.messages).toHaveLength(1);
    expect(request?.messages[0]?.text).toContain('Specification (spec.md):\nA stack, then a queue built on it.');
    expect(request?.messages[0]?.text).toContain('package.json\nsrc/index.ts');
  });

  it('retries once with a message naming the problems, and uses the corrected answer', async () => {
    const model = new ScriptedModel([answer(CYCLIC), answer(VALID)]);
    const result = await decompose(model);
    expect(result.calls).toBe(2);
    expect(result.corrected.map((problem) => problem.message)).toEqual(['Task "TDD-1" depends on itself.']);
    expect(result.file.tasks).toHaveLength(2);
    const retry = model.requests[1];
    expect(retry?.messages.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user']);
    expect(retry?.messages[1]?.text).toBe(JSON.stringify(CYCLIC));
    expect(retry?.messages[2]?.text).toContain('- Task "TDD-1" depends on itself.');
    expect(retry?.messages[2]?.text).toContain('Answer again with the whole corrected tasks file');
  });

  it('retries when the answer has no tasks file at all', async () => {
    const model = new ScriptedModel([{ value: undefined, text: 'Here is my plan: do it.' }, answer(VALID)]);
    const result = await decompose(model);
    expect(result.calls).toBe(2);
    expect(model.requests[1]?.messages[2]?.text).toContain('The answer contained no tasks file (no JSON object).');
  });

  it('fails with every problem of the second answer when it is invalid too, after exactly two calls', async () => {
    const model = new ScriptedModel([answer(CYCLIC), answer(SHARED), answer(VALID)]);
    const error: unknown = await decompose(model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RatchetError);
    expect(error).toMatchObject({ code: 'gate-failed' });
    const message = (error as RatchetError).message;
    expect(message).toContain("The model's tasks file was invalid twice");
    expect(message).toContain('all own the implementation file src/stack.ts');
    expect(message).toContain('all write the test file test/stack.test.ts');
    expect((error as RatchetError).hint).toMatch(/write the tasks file by hand/);
    expect(model.requests).toHaveLength(2);
  });

  it('refuses an override that drops the Stage line', async () => {
    await expect(prompts("[tasks.decompose]\nsystem = '''\nYou plan tasks.\n'''\n")).rejects.toMatchObject({
      code: 'config',
      message: 'The tasks.decompose.system prompt must start with the line "Stage: DECOMPOSE"',
    });
  });
});
