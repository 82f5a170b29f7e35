import { describe, expect, it } from 'vitest';
import { checkTasksFile, checkTasksJson, type TasksFileProblem } from '../../src/workflows/tasks/tasks-file.js';
import {
  dependencyLayers,
  dependentsOf,
  findCycles,
  mergeOrder,
  nextMerge,
} from '../../src/workflows/tasks/task-graph.js';

/** A valid task; `fields` on top. */
function task(key: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key,
    title: `Task ${key}`,
    goal: `Build ${key}`,
    acceptanceCriteria: [`${key} works`],
    testFile: `test/${key}.test.ts`,
    implFile: `src/${key}.ts`,
    dependsOn: [],
    exports: [key.toLowerCase()],
    ...fields,
  };
}

function problems(value: unknown): TasksFileProblem[] {
  const check = checkTasksFile(value);
  if (check.ok) throw new Error('expected problems');
  return check.problems;
}

describe('the tasks file', () => {
  it('accepts a valid file and fills in empty dependsOn and exports', () => {
    const check = checkTasksFile({
      tasks: [task('A'), { ...task('B', { dependsOn: ['A'] }), exports: undefined }],
    });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.file.tasks.map((entry) => [entry.key, entry.dependsOn, entry.exports])).toEqual([
      ['A', [], ['a']],
      ['B', ['A'], []],
    ]);
  });

  it('names a cycle through several tasks, and a task that depends on itself', () => {
    const found = problems({
      tasks: [
        task('A', { dependsOn: ['C'] }),
        task('B', { dependsOn: ['A'] }),
        task('C', { dependsOn: ['B'] }),
        task('D', { dependsOn: ['D'] }),
        task('E', { dependsOn: ['A'] }),
      ],
    });
    expect(found.map((problem) => problem.message)).toEqual([
      'The dependencies form a cycle: A -> C -> B -> A.',
      'Task "D" depends on itself.',
    ]);
  });

  it('reports every problem at once: schema errors task by task, and the graph problems of the rest', () => {
    const found = problems({
      tasks: [
        task('A'),
        task('A', { implFile: 'src/other.ts', testFile: 'test/other.test.ts' }),
        task('B', { dependsOn: ['Z'], implFile: 'src/A.ts' }),
        task('C', { testFile: 'src/A.ts', implFile: 'src/C.ts' }),
        task('D', { acceptanceCriteria: [], implFile: '../outside.ts' }),
        task('E', { testFile: 'test/A.test.ts', implFile: 'src/E.ts' }),
      ],
    });
    expect(found.map((problem) => problem.code).sort()).toEqual(
      [
        'duplicate-key',
        'schema',
        'schema',
        'shared-impl-file',
        'shared-test-file',
        'test-is-impl-file',
        'unknown-dependency',
      ].sort(),
    );
    const messages = found.map((problem) => problem.message);
    expect(messages).toContain('Two tasks have the key "A".');
    expect(messages).toContain('Task "B" depends on "Z", which is not a task of this file.');
    expect(messages).toContain('Tasks "A", "B" all own the implementation file src/A.ts; give each task its own.');
    expect(messages).toContain('Tasks "A", "E" all write the test file test/A.test.ts; give each task its own.');
    expect(messages).toContain('src/A.ts is the test file of "C" and the implementation file of "A".');
    expect(messages.filter((message) => message.startsWith('tasks[4]'))).toEqual([
      'tasks[4].acceptanceCriteria: Too small: expected array to have >=1 items',
      'tasks[4].implFile: "../outside.ts" has an empty, "." or ".." segment (write a plain relative path)',
    ]);
  });

  it('refuses a task whose test file is its own implementation file', () => {
    expect(problems({ tasks: [task('A', { testFile: 'src/A.ts' })] })).toEqual([
      expect.objectContaining({
        code: 'test-is-impl-file',
        message: 'Task "A" uses src/A.ts as both its test and its implementation file.',
      }),
    ]);
  });

  it.each([
    ['/etc/passwd', 'is absolute'],
    ['.git/hooks/pre-commit', 'inside .git or .ratchet'],
    ['src/.ratchet/x.ts', 'inside .git or .ratchet'],
    ['src\\a.ts', 'backslash'],
    ['src//a.ts', 'empty'],
  ])('refuses the path %s', (path, reason) => {
    const found = problems({ tasks: [task('A', { implFile: path })] });
    expect(found).toHaveLength(1);
    expect(found[0]?.message).toContain(reason);
  });

  it('refuses keys that could not be part of a branch name, unknown fields and an empty list', () => {
    expect(problems({ tasks: [task('a/../b')] })[0]?.message).toMatch(/^tasks\[0\]\.key: must be 1-64 letters/);
    expect(problems({ tasks: [task('A', { depends_on: ['B'] })] })[0]?.message).toMatch(
      /^tasks\[0\]: Unrecognized key: "depends_on"/,
    );
    expect(problems({ tasks: [] })[0]?.message).toMatch(/^tasks: Too small/);
    expect(problems([])[0]).toMatchObject({ code: 'schema', path: '(file)' });
  });

  it('names the specification it was planned from, a path inside the repository', () => {
    const check = checkTasksFile({ spec: 'docs/spec.md', tasks: [task('A')] });
    expect(check.ok && check.spec).toBe('docs/spec.md');
    const unnamed = checkTasksFile({ tasks: [task('A')] });
    expect(unnamed.ok && unnamed.spec).toBeNull();
    // It exempts a file from the working tree's changes: never one outside the repository, nor .git's.
    expect(problems({ spec: '../outside.md', tasks: [task('A')] })[0]?.message).toMatch(/^spec: /);
    expect(problems({ spec: '.git/config', tasks: [task('A')] })[0]?.message).toMatch(/^spec: /);
  });

  it('reads JSON text, and says when it is not JSON', () => {
    expect(checkTasksJson(JSON.stringify({ tasks: [task('A')] })).ok).toBe(true);
    const check = checkTasksJson('{"tasks": [');
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.problems[0]?.message).toMatch(/^Not valid JSON: /);
  });
});

describe('the task graph', () => {
  const graph = [
    { key: 'api', dependsOn: ['model', 'store'] },
    { key: 'model', dependsOn: [] },
    { key: 'cli', dependsOn: ['api'] },
    { key: 'store', dependsOn: ['model'] },
    { key: 'docs', dependsOn: [] },
  ];

  it('puts tasks in layers by dependency, file order within a layer', () => {
    expect(dependencyLayers(graph)).toEqual([['model', 'docs'], ['store'], ['api'], ['cli']]);
    expect(mergeOrder(graph)).toEqual(['model', 'docs', 'store', 'api', 'cli']);
  });

  it('refuses to layer a cycle', () => {
    expect(() =>
      dependencyLayers([
        { key: 'a', dependsOn: ['b'] },
        { key: 'b', dependsOn: ['a'] },
      ]),
    ).toThrow(/a, b depend on each other in a cycle/);
  });

  it('merges the finished task that comes first in merge order, once its dependencies are merged', () => {
    const byKey = new Map(graph.map((entry) => [entry.key, entry]));
    const order = mergeOrder(graph);
    expect(nextMerge(order, byKey, new Set(['docs', 'model']), new Set())).toBe('model');
    expect(nextMerge(order, byKey, new Set(['docs', 'model']), new Set(['model']))).toBe('docs');
    expect(nextMerge(order, byKey, new Set(['api']), new Set(['model']))).toBeUndefined();
    expect(nextMerge(order, byKey, new Set(['api']), new Set(['model', 'store']))).toBe('api');
  });

  it('finds every task a failure blocks, directly or through others', () => {
    expect(dependentsOf(graph, 'model')).toEqual(['api', 'cli', 'store']);
    expect(dependentsOf(graph, 'store')).toEqual(['api', 'cli']);
    expect(dependentsOf(graph, 'docs')).toEqual([]);
  });

  it('finds no cycle in an acyclic graph and ignores unknown dependencies', () => {
    expect(findCycles([...graph, { key: 'x', dependsOn: ['nowhere'] }])).toEqual([]);
  });
});
