/**
 * The model of the `ratchet tasks run` end-to-end tests, as the fake Anthropic server's fallback:
 * it plays every task's TDD pipeline, reading each request as a model would. The task comes from
 * the feature text the pipeline puts in its prompts (`Task KEY: ...`), the stage from the system
 * prompt's first line, the turn from the assistant messages so far. Per task it writes a one-item
 * `test-list.md` (PLAN), the task's test (RED) and implementation (GREEN), then answers the second
 * PLAN with `currentTest: null`. `delayMs` makes every reply slow (the pool must overlap them).
 */
import { z } from 'zod';
import { bodySchema, textOf } from './anthropic-request.js';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

export interface BrainTask {
  key: string;
  testFile: string;
  implFile: string;
  test: string;
  impl: string;
  /** RED's first attempt writes this instead of `test` (a weak test the review refuses); RED_FIX writes `test`. */
  weakTest?: string;
  /** RED's first attempt writes this stub instead of the default one (with `weakTest`). */
  weakStub?: string;
  /** PLAN's first answer names these files instead of the task's (PLAN must be refused, then answer right). */
  planFiles?: { testFile: string; implFile: string };
  /** GREEN writes this instead of `impl` (a task that cannot pass: it fails after its attempts). */
  brokenImpl?: string;
  /**
   * More files GREEN writes beside the implementation (to make two tasks' merges conflict, or one
   * break another's code); a function gets the task's attempt (1, 2, ...) to write other files in
   * a re-run.
   */
  extraFiles?: Record<string, string> | ((attempt: number) => Record<string, string>);
}

export interface TasksBrainOptions {
  delayMs?: number;
  /**
   * Holds a task's last reply (the PLAN that finds its test list done, after which the task
   * finishes) until the promise returned settles; undefined: answer at once.
   */
  holdLast?: (key: string, attempt: number) => Promise<unknown> | undefined;
}

export interface TasksBrain {
  reply(request: RecordedRequest): AnthropicReply;
  /** `KEY STAGE` of every request, in arrival order. */
  readonly calls: string[];
  readonly unexpected: string[];
}

const item = (key: string): string => `${key} meets its acceptance criteria`;

export function createTasksBrain(tasks: readonly BrainTask[], options: TasksBrainOptions = {}): TasksBrain {
  const byKey = new Map(tasks.map((task) => [task.key, task]));
  // Each attempt of a task starts with a PLAN that writes its test list: that counts them.
  const attempts = new Map<string, number>();
  const calls: string[] = [];
  const unexpected: string[] = [];
  const message = (content: AnthropicContentBlock[]): AnthropicReply => ({
    kind: 'message',
    content,
    ...(options.delayMs ? { delayMs: options.delayMs } : {}),
  });
  const text = (say: string): AnthropicReply => message([{ type: 'text', text: say }]);
  const tool = (name: string, input: unknown): AnthropicReply => message([{ type: 'tool_use', name, input }]);
  return {
    calls,
    unexpected,
    reply(request) {
      const body = bodySchema.parse(request.body);
      const stage = /^Stage: (\w+)/.exec(textOf(body.system))?.[1] ?? '?';
      const prompt = textOf(body.messages[0]?.content);
      const key =
        /Task ([A-Za-z0-9_-]+):/.exec(prompt)?.[1] ??
        [...byKey.keys()].find((k) => prompt.includes(byKey.get(k)?.testFile ?? '\0'));
      const task = key === undefined ? undefined : byKey.get(key);
      const turn = body.messages.filter((entry) => entry.role === 'assistant').length;
      calls.push(`${key ?? '?'} ${stage}`);
      if (task === undefined) {
        unexpected.push(`${stage}: no task in ${prompt.slice(0, 200)}`);
        return text('I do not know this task.');
      }
      const attempt = attempts.get(task.key) ?? 1;
      if (stage === 'PLAN') {
        if (prompt.includes('- [x]')) {
          const after = options.holdLast?.(task.key, attempt);
          const last = tool('StructuredOutput', { currentTest: null });
          return after === undefined || last.kind !== 'message' ? last : { ...last, after };
        }
        if (turn === 0) attempts.set(task.key, (attempts.get(task.key) ?? 0) + 1);
        if (turn === 0)
          return tool('Write', { file_path: 'test-list.md', content: `# ${task.key}\n\n- [ ] ${item(task.key)}\n` });
        // PLAN's feedback after a refusal of other files says which the task owns.
        const files =
          task.planFiles !== undefined && !prompt.includes('answer with exactly these files') ? task.planFiles : task;
        return tool('StructuredOutput', {
          currentTest: { description: item(task.key), testFile: files.testFile, implFile: files.implFile },
        });
      }
      if (stage === 'RED' || stage === 'RED_FIX') {
        // The test, and a stub so it loads: RED must fail by assertion, not by a missing module.
        const name = /export function (\w+)/.exec(task.impl)?.[1] ?? 'stub';
        return turn === 0
          ? message([
              {
                type: 'tool_use',
                name: 'Write',
                input: {
                  file_path: task.testFile,
                  content: stage === 'RED' ? (task.weakTest ?? task.test) : task.test,
                },
              },
              {
                type: 'tool_use',
                name: 'Write',
                input: {
                  file_path: task.implFile,
                  content:
                    stage === 'RED' && task.weakStub !== undefined
                      ? task.weakStub
                      : `export function ${name}() {\n  return '';\n}\n`,
                },
              },
            ])
          : text('The test is written.');
      }
      if (stage === 'GREEN' || stage === 'FIX') {
        const writes: AnthropicContentBlock[] = [
          {
            type: 'tool_use',
            name: 'Write',
            input: { file_path: task.implFile, content: task.brokenImpl ?? task.impl },
          },
          ...Object.entries(
            typeof task.extraFiles === 'function' ? task.extraFiles(attempt) : (task.extraFiles ?? {}),
          ).map(([file_path, content]): AnthropicContentBlock => ({
            type: 'tool_use',
            name: 'Write',
            input: { file_path, content },
          })),
        ];
        return turn === 0 ? message(writes) : text('Implemented.');
      }
      unexpected.push(`${task.key} ${stage} turn ${turn}`);
      return text('Nothing to do.');
    },
  };
}

/** A small ES-module project tested with `node --test`: the tasks add one letter function each. */
export const LETTERS_PROJECT = {
  'README.md': '# letters\n',
  'package.json': `${JSON.stringify({ name: 'letters', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/version.js': "export const VERSION = '1';\n",
  'test/version.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION } from '../src/version.js';
test('version', () => assert.equal(VERSION, '1'));
`,
};

/** A task whose implementation returns `value`, importing its dependencies' functions to build it. */
export function letterTask(key: string, value: string, dependsOn: string[] = []): BrainTask & { dependsOn: string[] } {
  const name = key.toLowerCase();
  const imports = dependsOn
    .map((dep) => `import { ${dep.toLowerCase()} } from './${dep.toLowerCase()}.js';\n`)
    .join('');
  const body =
    dependsOn.length === 0
      ? `'${value}'`
      : `${dependsOn.map((dep) => `${dep.toLowerCase()}()`).join(' + ')} + '${key}'`;
  return {
    key,
    dependsOn,
    testFile: `test/${name}.test.js`,
    implFile: `src/${name}.js`,
    test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ${name} } from '../src/${name}.js';
test('${name} returns ${value}', () => assert.equal(${name}(), '${value}'));
`,
    impl: `${imports}export function ${name}() {\n  return ${body};\n}\n`,
  };
}

/**
 * A letter task whose test, whenever it runs, puts a folder with a `vitest` of its own where the
 * worktree's shared `node_modules` link was (the attack the shared-dependency guard undoes).
 */
export function nodeModulesSwapperTask(key: string): BrainTask & { dependsOn: string[] } {
  const task = letterTask(key, key);
  const name = key.toLowerCase();
  task.test = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ${name} } from '../src/${name}.js';
// No trailing slash: the link itself goes, not what it points to.
const modules = fileURLToPath(new URL('../node_modules', import.meta.url));
try {
  rmSync(modules, { recursive: true, force: true });
  mkdirSync(modules + '/.bin', { recursive: true });
  writeFileSync(modules + '/.bin/vitest', '#!/bin/sh\\necho all tests pass\\n');
  chmodSync(modules + '/.bin/vitest', 0o755);
} catch {}
test('${name} returns ${key}', () => assert.equal(${name}(), '${key}'));
`;
  return task;
}

export function tasksFile(tasks: ReadonlyArray<BrainTask & { dependsOn: string[] }>): string {
  return `${JSON.stringify(
    {
      tasks: tasks.map((task) => ({
        key: task.key,
        title: `Letter ${task.key}`,
        goal: `A function ${task.key.toLowerCase()}() in ${task.implFile}`,
        acceptanceCriteria: [`${task.key.toLowerCase()}() returns its letters`],
        testFile: task.testFile,
        implFile: task.implFile,
        dependsOn: task.dependsOn,
        exports: [task.key.toLowerCase()],
      })),
    },
    null,
    2,
  )}\n`;
}

/** A `task-update` event as `--json` prints it. */
export const TaskUpdateSchema = z.object({
  type: z.literal('task-update'),
  task: z.string(),
  status: z.string(),
  attempt: z.number(),
  worker: z.string().optional(),
  mergeCommit: z.string().optional(),
  reason: z.string().optional(),
});
export type TaskUpdate = z.infer<typeof TaskUpdateSchema>;

/** The `task-update` events among a run's `--json` events, parsed. */
export function taskUpdatesOf(events: ReadonlyArray<{ type?: unknown }>): TaskUpdate[] {
  return events.flatMap((event) => (event.type === 'task-update' ? [TaskUpdateSchema.parse(event)] : []));
}
