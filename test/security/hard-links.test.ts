/**
 * Issue 11, findings 4 and 12: without a sandbox, the agent's Bash made a hard link from the
 * worktree to the user's checkout's `.env`, and the Write tool then wrote through it into the
 * checkout. A scripted model tries it here with Write and with Edit (its Bash unsandboxed, as
 * where bubblewrap is missing): both are refused, and the file outside keeps its content.
 * Behind the refusal, every write replaces the file (a new file renamed into place), so a link
 * made between the check and the write changes nothing outside either.
 */
import { chmod, link, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/core/events.js';
import { createToolLoopRuntime } from '../../src/agent/tool-loop-runtime.js';
import { executeTool } from '../../src/agent/tools/agent-tool.js';
import { editTool } from '../../src/agent/tools/edit-tool.js';
import { replaceFile } from '../../src/agent/tools/replace-file.js';
import { writeTool } from '../../src/agent/tools/write-tool.js';
import { createGitWorkspace } from '../../src/workflows/tdd/git-workspace.js';
import { Git } from '../../src/git/git.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { createTempWorktree, greenStageRequest, toolContext, type TempWorktree } from '../agent/agent-fixtures.js';
import { FakeModelClient, text, toolCall } from '../support/fake-model-client.js';

const SECRET_ENV = 'DATABASE_URL=postgres://app:kept-as-it-was@db/app\n';

let tmp: TempWorktree;
/** The user's checkout's `.env`, beside the worktree. */
let outside: string;

beforeEach(async () => {
  tmp = await createTempWorktree({ 'src/a.js': 'export const a = 1;\n' });
  outside = join(tmp.root, 'checkout.env');
  await writeFile(outside, SECRET_ENV);
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('hard links out of the worktree', () => {
  it("a model that links the checkout's .env into the worktree cannot write it with Write or Edit", async () => {
    const model = new FakeModelClient([
      toolCall('Bash', { command: `ln ${JSON.stringify(outside)} notes.env && ls -l notes.env` }),
      toolCall('Write', { file_path: 'notes.env', content: 'DATABASE_URL=postgres://attacker@evil/\n' }),
      toolCall('Edit', { file_path: 'notes.env', old_string: 'kept-as-it-was', new_string: 'attacker' }),
      text('Done.'),
    ]);
    const events: EventInput[] = [];
    const runtime = createToolLoopRuntime({ model, runner: createProcessRunner() });
    const outcome = await runtime.runStage(greenStageRequest(tmp.dir, events));

    expect(outcome.status).toBe('completed');
    const results = events.flatMap((event) => (event.type === 'tool-call' ? [event] : []));
    expect(results.map((event) => [event.tool, event.isError])).toEqual([
      ['Bash', false],
      ['Write', true],
      ['Edit', true],
    ]);
    expect(results[1]?.output).toContain('has 2 hard links');
    expect(await readFile(outside, 'utf8')).toBe(SECRET_ENV);
  });

  it('a link made after the check still changes nothing outside: the write replaces the file', async () => {
    const inside = join(tmp.dir, 'notes.env');
    await link(outside, inside);
    await replaceFile(inside, 'new content\n');
    expect(await readFile(inside, 'utf8')).toBe('new content\n');
    expect(await readFile(outside, 'utf8')).toBe(SECRET_ENV);
    expect((await stat(outside)).nlink).toBe(1);
  });

  it("the orchestrator's own writes (test-list.md) replace the file too", async () => {
    const inside = join(tmp.dir, 'test-list.md');
    await link(outside, inside);
    await createGitWorkspace(tmp.dir, new Git(tmp.dir)).writeFile('test-list.md', '- [x] done\n');
    expect(await readFile(outside, 'utf8')).toBe(SECRET_ENV);
  });

  it('Write and Edit keep working on ordinary files, permissions included', async () => {
    const script = join(tmp.dir, 'run.sh');
    const context = toolContext(tmp.dir);
    expect(
      (await executeTool(writeTool, { file_path: 'run.sh', content: '#!/bin/sh\necho a\n' }, context)).isError,
    ).toBe(false);
    await chmod(script, 0o755);
    const edited = await executeTool(
      editTool,
      { file_path: 'run.sh', old_string: 'echo a', new_string: 'echo b' },
      context,
    );
    expect(edited.isError).toBe(false);
    expect(await readFile(script, 'utf8')).toBe('#!/bin/sh\necho b\n');
    expect((await stat(script)).mode & 0o777).toBe(0o755);
  });
});
