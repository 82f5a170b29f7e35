import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCheckpointStore } from '../../../src/workflows/team/checkpoints.js';
import {
  createApprovalStore,
  createConversationStore,
  createIterationStore,
} from '../../../src/workflows/team/file-stores.js';

describe('team stores', () => {
  let teamDir: string;
  beforeEach(async () => {
    teamDir = await mkdtemp(join(tmpdir(), 'team-stores-'));
  });
  afterEach(async () => {
    await rm(teamDir, { recursive: true, force: true });
  });

  it('reads an iteration that says grooming as refinement and keeps fields it does not know', async () => {
    const store = createIterationStore(teamDir);
    const { iteration, dir } = await store.create({ description: 'calc', maxTurns: 5 });
    const file = join(dir, 'iteration.json');
    const raw = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...raw, phase: 'grooming', future_field: { kept: true } }));
    expect((await store.getCurrent()).iteration).toMatchObject({
      id: iteration.id,
      phase: 'refinement',
      future_field: { kept: true },
    });
    await store.saveFields(iteration.id, { max_turns: 9 });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ max_turns: 9, future_field: { kept: true } });
  });

  it('keeps the conversation as JSONL with the key "from", and scopes phase history after the last boundary', async () => {
    const store = createConversationStore(teamDir);
    await store.append({ from: 'agent-1', content: 'a', extra: 1 });
    await store.append({ from: 'system', content: '---', phase_boundary: true });
    await store.append({ from: 'agent-2', content: 'b' });
    expect((await readFile(store.logPath, 'utf8')).split('\n')[0]).toBe('{"from":"agent-1","content":"a","extra":1}');
    expect(await store.readPhaseHistory()).toEqual([{ from: 'agent-2', content: 'b' }]);
    expect(await store.readFull()).toHaveLength(3);
  });

  it('resolves a pending approval once, and names what is pending otherwise', async () => {
    const store = createApprovalStore(teamDir);
    await store.add({ id: 'a1', agent: 'agent-1', path: 'x', content: 'y', status: 'pending' });
    expect(await store.resolve('a1', { status: 'denied', reason: 'no' })).toMatchObject({
      status: 'denied',
      reason: 'no',
    });
    await expect(store.resolve('a1', { status: 'approved' })).rejects.toThrow(/already denied/);
    await expect(store.resolve('a9', { status: 'approved' })).rejects.toThrow(/no approval a9/);
  });

  it('restores a checkpoint exactly: later files removed, changed ones back as saved', async () => {
    const dir = join(teamDir, 'iter-1');
    const conversation = createConversationStore(dir);
    await conversation.append({ from: 'agent-1', content: 'before' });
    await writeFile(join(dir, 'iteration.json'), '{"phase":"planning"}\n');
    const checkpoints = createCheckpointStore(dir, { phase: () => Promise.resolve('planning') });
    const first = await checkpoints.create('manual');
    await conversation.append({ from: 'agent-2', content: 'after' });
    await writeFile(join(dir, 'tasks.json'), '[]\n');
    await writeFile(join(dir, 'iteration.json'), '{"phase":"pre-code-review"}\n');
    await checkpoints.create('second');

    await checkpoints.restore(first.number);
    expect(await conversation.readFull()).toEqual([{ from: 'agent-1', content: 'before' }]);
    expect(await readFile(join(dir, 'iteration.json'), 'utf8')).toBe('{"phase":"planning"}\n');
    await expect(readFile(join(dir, 'tasks.json'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect((await checkpoints.list()).map((info) => info.description)).toEqual(['manual', 'second']);
  });
});
