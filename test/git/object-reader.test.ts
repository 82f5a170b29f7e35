/**
 * `Git.objects()`: one `git cat-file --batch` answering many questions about a repository's
 * objects, in order, each answer exactly the object's bytes; what names nothing is null; objects
 * written after it started are found; it ends with its owner's `close()`, and a question after
 * that starts it again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let trace: string;

/** How many `git cat-file` processes ran, as git itself reports them (trace2). */
function catFileProcesses(): number {
  if (!existsSync(trace)) return 0;
  return readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"event":"cmd_name"') && line.includes('"name":"cat-file"')).length;
}

beforeEach(async () => {
  repo = await createTempRepo({
    files: { 'src/a.js': 'export const a = 1;\n', 'data/bytes.bin': 'caf\u00e9\n\n\nend', 'empty.txt': '' },
  });
  trace = repo.path('git-trace.json');
});

afterEach(async () => {
  await repo.cleanup();
});

describe('the object reader', () => {
  it('answers many questions from one process, in order, byte for byte', async () => {
    const git = new Git(repo.dir, { env: { ...repo.env, GIT_TRACE2_EVENT: trace } });
    const head = await git.head();
    await using objects = git.objects();
    const answers = await Promise.all(
      ['src/a.js', 'data/bytes.bin', 'missing.js', 'src', 'empty.txt'].map((path) => objects.read(`${head}:${path}`)),
    );
    expect(answers.map((answer) => answer?.type ?? null)).toEqual(['blob', 'blob', null, 'tree', 'blob']);
    expect(answers[0]?.content.toString('utf8')).toBe('export const a = 1;\n');
    expect(answers[1]?.content.toString('utf8')).toBe('caf\u00e9\n\n\nend');
    expect(answers[4]?.content.length).toBe(0);
    expect(await objects.read(`${'0'.repeat(40)}:src/a.js`)).toBeNull();
    expect(catFileProcesses()).toBe(1);
  });

  it('finds objects written after it started, and starts again after close', async () => {
    const git = new Git(repo.dir, { env: { ...repo.env, GIT_TRACE2_EVENT: trace } });
    const objects = git.objects();
    const first = await git.head();
    expect((await objects.read(`${first}:src/b.js`)) ?? null).toBeNull();
    await repo.write({ 'src/b.js': 'export const b = 2;\n' });
    const second = (await git.commitAll('feat: b')) ?? '';
    expect((await objects.read(`${second}:src/b.js`))?.content.toString('utf8')).toBe('export const b = 2;\n');
    await objects.close();
    expect((await objects.read(`${second}:src/a.js`))?.content.toString('utf8')).toBe('export const a = 1;\n');
    await objects.close();
    expect(catFileProcesses()).toBe(2);
  });

  it('refuses a name with a line break (it would be two questions)', async () => {
    await using objects = repo.git.objects();
    const head = await repo.git.head();
    const refused = await objects.read(`${head}:src/a.js\n${head}:src/a.js`).catch((error: unknown) => error);
    expect(isRatchetError(refused, 'git')).toBe(true);
  });

  it('holds the event loop while its owner waits on it, and only then (built module, a Node of its own)', async () => {
    const head = await repo.git.head();
    const module = new URL('../../dist/git/git.js', import.meta.url).href;
    // Idle between questions it keeps nothing alive; waited on (a read, close) it must, or Node
    // would end mid-run with the await unsettled (exit 13).
    const script = [
      `const { Git } = await import(${JSON.stringify(module)});`,
      `const objects = new Git(${JSON.stringify(repo.dir)}).objects();`,
      `const first = await objects.read(${JSON.stringify(`${head}:src/a.js`)});`,
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      `const second = await objects.read(${JSON.stringify(`${head}:src/a.js`)});`,
      'await objects.close();',
      "console.log(first.type, second.type, 'closed');",
    ].join('\n');
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      env: { ...process.env, ...repo.env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('blob blob closed');
    expect(result.status).toBe(0);
  });
});
