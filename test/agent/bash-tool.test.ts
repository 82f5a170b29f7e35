import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import { executeTool } from '../../src/agent/tools/agent-tool.js';
import { bashTool } from '../../src/agent/tools/bash-tool.js';
import { OPEN_POLICY, createTempWorktree, toolContext, type TempWorktree } from './agent-fixtures.js';

let tmp: TempWorktree;

beforeEach(async () => {
  tmp = await createTempWorktree();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** Running and not a zombie (an orphan may wait a moment for its reaper). */
async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return stat !== '' && state !== 'Z' && state !== 'X';
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await isRunning(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !(await isRunning(pid));
}

describe('Bash', () => {
  it('runs in the worktree and reports output and exit code', async () => {
    const ok = await executeTool(bashTool, { command: 'pwd; echo done' }, toolContext(tmp.dir));
    expect(ok).toEqual({ output: `${tmp.dir}\ndone\nExit code: 0`, isError: false });
    const failed = await executeTool(bashTool, { command: 'echo oops >&2; exit 3' }, toolContext(tmp.dir));
    expect(failed).toEqual({ output: 'oops\nExit code: 3', isError: true });
    const quiet = await executeTool(bashTool, { command: 'true' }, toolContext(tmp.dir));
    expect(quiet.output).toBe('(no output)\nExit code: 0');
  });

  it('caps long output keeping head and tail', async () => {
    const result = await executeTool(bashTool, { command: 'seq 1 40000' }, toolContext(tmp.dir));
    expect(result.output.length).toBeLessThan(31_000);
    expect(result.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.output).toMatch(/characters omitted/);
    expect(result.output.endsWith('39999\n40000\nExit code: 0')).toBe(true);
  });

  it('kills the whole process group on timeout', async () => {
    const command = 'sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; sleep 30';
    const started = Date.now();
    const result = await executeTool(bashTool, { command, timeout: 500 }, toolContext(tmp.dir));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('timed out after 500 ms');
    for (const file of ['bg.pid', 'sh.pid']) {
      const pid = Number((await readFile(join(tmp.dir, file), 'utf8')).trim());
      expect(pid).toBeGreaterThan(0);
      expect(await waitUntilGone(pid, 3_000)).toBe(true);
    }
  });

  it('lets a given timeout shorten the stage timeout but never extend it', async () => {
    const context = toolContext(tmp.dir, OPEN_POLICY, { bashTimeoutMs: 400 });
    const started = Date.now();
    const result = await executeTool(bashTool, { command: 'sleep 20', timeout: 600_000 }, context);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.output).toContain('timed out after 400 ms');
  });

  it('throws interrupted when the stage signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const context = toolContext(tmp.dir, OPEN_POLICY, { signal: controller.signal });
    const error: unknown = await executeTool(bashTool, { command: 'sleep 20' }, context).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RatchetError);
    expect((error as RatchetError).code).toBe('interrupted');
  });

  it('returns invalid input as an error result', async () => {
    const result = await executeTool(bashTool, { command: '', timeout: -1 }, toolContext(tmp.dir));
    expect(result.isError).toBe(true);
    expect(result.output).toContain('- command:');
    expect(result.output).toContain('- timeout:');
  });
});
