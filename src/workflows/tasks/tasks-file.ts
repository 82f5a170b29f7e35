import { z } from 'zod';
import { findCycles } from './task-graph.js';

/**
 * The tasks file (`ratchet tasks plan` writes it, `ratchet tasks run` reads it): JSON, camelCase
 * like the handoff notes. The model writes it, or a person does; either way it is untrusted input
 * that names branches (keys) and files the task's agents will be allowed to write (paths), so
 * both are held to a safe shape here, before anything runs.
 */

/**
 * Keys become parts of branch names and queue job ids: letters, digits, `-` and `_` only (the
 * seed's `TDD-0A`, `TDD-1` fit), so no key can smuggle a ref component (`..`, `.lock`, `/`).
 */
const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Why a path is refused, or null for a clean relative path inside the repository. */
function pathProblem(path: string): string | null {
  if (path.includes('\0')) return 'contains a NUL character';
  if (path.includes('\\')) return 'uses a backslash (write paths with /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is absolute (write it relative to the repository root)';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'has an empty, "." or ".." segment (write a plain relative path)';
  if (segments.some((segment) => segment === '.git' || segment === '.ratchet'))
    return 'is inside .git or .ratchet, which no task may write';
  return null;
}

const RepoPath = z
  .string()
  .min(1)
  .max(300)
  .superRefine((path, context) => {
    const problem = pathProblem(path);
    if (problem !== null) context.addIssue({ code: 'custom', message: `"${path}" ${problem}` });
  });

const TaskKey = z.string().regex(KEY_PATTERN, {
  message: 'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit (e.g. "TDD-1")',
});

export const TaskSpecSchema = z.strictObject({
  key: TaskKey.describe('Unique key of the task, e.g. "TDD-1"; used in branch names.'),
  title: z.string().min(1).max(200).describe('A short title.'),
  goal: z.string().min(1).describe('What the task accomplishes, as a feature request for its TDD pipeline.'),
  acceptanceCriteria: z.array(z.string().min(1)).min(1).describe('Testable criteria; each becomes at least one test.'),
  testFile: RepoPath.describe('The test file this task writes, relative to the repository root.'),
  implFile: RepoPath.describe('The implementation file this task owns, relative to the repository root.'),
  dependsOn: z
    .array(TaskKey)
    .default([])
    .describe('Keys of the tasks whose code this one uses; it starts once they are merged.'),
  exports: z
    .array(z.string().min(1))
    .default([])
    .describe('Names the implementation file exports, described to the tasks that depend on it.'),
});
export type TaskSpec = z.output<typeof TaskSpecSchema>;

export const TasksFileSchema = z.strictObject({
  tasks: z.array(TaskSpecSchema).min(1).describe('The tasks, in the order they were planned.'),
});
export type TasksFile = z.output<typeof TasksFileSchema>;

/**
 * What is wrong with a tasks file. Every problem carries a `message` written for the person (or
 * the model, in the corrective retry) who has to fix it, naming the tasks and files involved.
 */
export type TasksFileProblem = { message: string } & (
  | { code: 'schema'; path: string }
  | { code: 'duplicate-key'; key: string }
  | { code: 'unknown-dependency'; key: string; dependency: string }
  | { code: 'cycle'; cycle: string[] }
  | { code: 'shared-impl-file'; file: string; keys: string[] }
  | { code: 'shared-test-file'; file: string; keys: string[] }
  | { code: 'test-is-impl-file'; file: string; testOf: string; implOf: string }
);

/**
 * `spec`: the specification the file was planned from (`tasks plan` records it), relative to the
 * repository root, or null when the file names none. Not the model's to say (`TasksFileSchema`,
 * its answer's shape, has no such field): `tasks run` exempts it, as the file itself, from the
 * working tree's uncommitted changes.
 */
export type TasksFileCheck =
  { ok: true; file: TasksFile; spec: string | null } | { ok: false; problems: TasksFileProblem[] };

function issuePath(prefix: (string | number)[], path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of [...prefix, ...path]) {
    text += typeof part === 'number' ? `[${part}]` : `${text === '' ? '' : '.'}${String(part)}`;
  }
  return text === '' ? '(file)' : text;
}

function schemaProblems(error: z.ZodError, prefix: (string | number)[]): TasksFileProblem[] {
  return error.issues.map((issue) => {
    const path = issuePath(prefix, issue.path);
    return { code: 'schema', path, message: `${path}: ${issue.message}` };
  });
}

/** Keys (in file order) of the tasks that share one value of `field`, for each value shared. */
function shared(tasks: readonly TaskSpec[], field: 'testFile' | 'implFile'): [string, string[]][] {
  const owners = new Map<string, string[]>();
  for (const task of tasks) owners.set(task[field], [...(owners.get(task[field]) ?? []), task.key]);
  return [...owners].filter(([, keys]) => keys.length > 1);
}

/**
 * The problems of tasks that each passed the schema: keys, dependencies and file ownership. Two
 * tasks run in parallel on their own branches and merge one after the other, so a file written
 * by two of them would conflict on every merge; and a task's test file is locked after its RED,
 * so it can be no other task's implementation file.
 */
function graphProblems(tasks: readonly TaskSpec[]): TasksFileProblem[] {
  const problems: TasksFileProblem[] = [];
  const keys = new Set<string>();
  for (const task of tasks) {
    if (keys.has(task.key))
      problems.push({ code: 'duplicate-key', key: task.key, message: `Two tasks have the key "${task.key}".` });
    keys.add(task.key);
  }
  for (const task of tasks) {
    for (const dependency of task.dependsOn) {
      if (!keys.has(dependency))
        problems.push({
          code: 'unknown-dependency',
          key: task.key,
          dependency,
          message: `Task "${task.key}" depends on "${dependency}", which is not a task of this file.`,
        });
    }
  }
  for (const cycle of findCycles(tasks)) {
    problems.push({
      code: 'cycle',
      cycle,
      message:
        cycle.length === 2
          ? `Task "${cycle[0] ?? ''}" depends on itself.`
          : `The dependencies form a cycle: ${cycle.join(' -> ')}.`,
    });
  }
  for (const [file, owners] of shared(tasks, 'implFile'))
    problems.push({
      code: 'shared-impl-file',
      file,
      keys: owners,
      message: `Tasks ${owners.map((key) => `"${key}"`).join(', ')} all own the implementation file ${file}; give each task its own.`,
    });
  for (const [file, owners] of shared(tasks, 'testFile'))
    problems.push({
      code: 'shared-test-file',
      file,
      keys: owners,
      message: `Tasks ${owners.map((key) => `"${key}"`).join(', ')} all write the test file ${file}; give each task its own.`,
    });
  const implOwner = new Map<string, string>();
  for (const task of tasks) if (!implOwner.has(task.implFile)) implOwner.set(task.implFile, task.key);
  for (const task of tasks) {
    const owner = implOwner.get(task.testFile);
    if (owner === undefined) continue;
    problems.push({
      code: 'test-is-impl-file',
      file: task.testFile,
      testOf: task.key,
      implOf: owner,
      message:
        owner === task.key
          ? `Task "${task.key}" uses ${task.testFile} as both its test and its implementation file.`
          : `${task.testFile} is the test file of "${task.key}" and the implementation file of "${owner}".`,
    });
  }
  return problems;
}

/**
 * Validates a parsed tasks file and returns every problem at once: the schema's, task by task
 * (so one malformed task does not hide the others' problems), then keys, dependencies, cycles
 * and file ownership among the tasks that are well formed.
 */
export function checkTasksFile(value: unknown): TasksFileCheck {
  const outer = z.strictObject({ spec: RepoPath.optional(), tasks: z.array(z.unknown()).min(1) }).safeParse(value);
  if (!outer.success) return { ok: false, problems: schemaProblems(outer.error, []) };
  const problems: TasksFileProblem[] = [];
  const tasks: TaskSpec[] = [];
  outer.data.tasks.forEach((entry, index) => {
    const parsed = TaskSpecSchema.safeParse(entry);
    if (parsed.success) tasks.push(parsed.data);
    else problems.push(...schemaProblems(parsed.error, ['tasks', index]));
  });
  problems.push(...graphProblems(tasks));
  return problems.length === 0 ? { ok: true, file: { tasks }, spec: outer.data.spec ?? null } : { ok: false, problems };
}

/** `checkTasksFile` over JSON text (a hand-written file, or a model's plain-text answer). */
export function checkTasksJson(text: string): TasksFileCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, problems: [{ code: 'schema', path: '(file)', message: `Not valid JSON: ${reason}` }] };
  }
  return checkTasksFile(value);
}

/** The problems as one text, one per line (for an error message or the corrective retry). */
export function describeProblems(problems: readonly TasksFileProblem[]): string {
  return problems.map((problem) => `- ${problem.message}`).join('\n');
}
