/**
 * Issue 11, finding 11: every model call stored its whole conversation, so a stage of 13 turns
 * that each read a 4 MB file made a 362 MB ledger. Each message is stored once now: the ledger
 * grows with what was exchanged, and reading the calls back gives the same conversations.
 */
import { createHash } from 'node:crypto';
import { statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest } from '../../src/core/model.js';
import { openLedger } from '../../src/ledger/index.js';
import { eventFactory, modelResponse, newRun, useTempDir } from './helpers.js';

const MB = 1024 * 1024;
const TURNS = 13;

/** A 4 MB file's text, different for each turn. */
function fileText(turn: number): string {
  const line = `// turn ${turn}: ${'x'.repeat(70)}\n`;
  return line.repeat(Math.ceil((4 * MB) / line.length)).slice(0, 4 * MB);
}

function sizeOnDisk(file: string): number {
  return [file, `${file}-wal`].filter((path) => existsSync(path)).reduce((sum, path) => sum + statSync(path).size, 0);
}

const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

describe('model calls in the ledger', () => {
  const temp = useTempDir();

  it('store each message once: 13 turns reading 4 MB each stay under 3 times what was exchanged', async () => {
    const file = join(temp.dir, 'ledger.db');
    const ledger = await openLedger(file, { secrets: [] });
    await ledger.createRun(newRun('run-big', { repoRoot: temp.dir }));
    const ev = eventFactory('run-big');
    // The conversation as the tool loop keeps it: one array, each message appended once.
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read every file and summarise it.' }];
    const sent: ModelRequest[] = [];
    let exchanged = 0;
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const request: ModelRequest = { system: 'Stage: GREEN', messages: [...messages], tools: [] };
      sent.push(request);
      await ledger.record(
        ev('model-call', {
          stage: 'GREEN',
          provider: 'anthropic',
          model: 'm',
          request,
          response: modelResponse(`Reading file ${turn}.`, { input: 10, output: 5 }, 0.001),
          error: null,
          latencyMs: 5,
        }),
      );
      const output = fileText(turn);
      exchanged += output.length;
      const call = { id: `t${turn}`, name: 'Read', input: { file_path: `src/file-${turn}.js` } };
      await ledger.record(
        ev('tool-call', { stage: 'GREEN', tool: 'Read', input: call.input, output, isError: false, durationMs: 1 }),
      );
      messages.push(
        { role: 'assistant', text: `Reading file ${turn}.`, toolCalls: [call] },
        { role: 'tool', results: [{ toolCallId: call.id, toolName: 'Read', output, isError: false }] },
      );
    }
    await ledger.close();

    // Each request sent every message so far: 4 MB x (0 + 1 + ... + 12) in all, 312 MB.
    expect(sizeOnDisk(file)).toBeLessThan(3 * exchanged);

    await using reopened = await openLedger(file, { secrets: [] });
    const calls = await reopened.modelCalls('run-big');
    expect(calls).toHaveLength(TURNS);
    expect(calls.map((call) => digest(call.request))).toEqual(sent.map(digest));
    const events = await reopened.events('run-big', { types: ['model-call'] });
    expect(events.map((event) => (event.type === 'model-call' ? digest(event.request) : ''))).toEqual(sent.map(digest));
  }, 60_000);

  it('reads calls recorded before 0003 (messages inline) beside new ones', async () => {
    const file = join(temp.dir, 'ledger.db');
    const request: ModelRequest = {
      system: 'Stage: RED',
      messages: [{ role: 'user', content: 'Write a failing test.' }],
      tools: [],
    };
    {
      await using ledger = await openLedger(file, { secrets: [] });
      await ledger.createRun(newRun('run-old', { repoRoot: temp.dir }));
      const ev = eventFactory('run-old');
      for (let n = 0; n < 2; n += 1)
        await ledger.record(
          ev('model-call', {
            stage: 'RED',
            provider: 'anthropic',
            model: 'm',
            request,
            response: null,
            error: { code: 'network', message: 'reset' },
            latencyMs: 1,
          }),
        );
    }
    // The first call as an earlier Ratchet stored it: the whole request inline, no hashes.
    const raw = new BetterSqlite3(file);
    raw
      .prepare('update model_calls set request_json = ?, message_hashes_json = null where seq = 1')
      .run(JSON.stringify(request));
    raw.close();

    await using ledger = await openLedger(file, { secrets: [] });
    expect((await ledger.modelCalls('run-old')).map((call) => call.request)).toEqual([request, request]);
  });

  it('redacts each stored message', async () => {
    const file = join(temp.dir, 'ledger.db');
    const secret = 'corp-secret-in-a-message-0042';
    {
      await using ledger = await openLedger(file, { secrets: [secret] });
      await ledger.createRun(newRun('run-s', { repoRoot: temp.dir }));
      await ledger.record(
        eventFactory('run-s')('model-call', {
          stage: 'GREEN',
          provider: 'anthropic',
          model: 'm',
          request: { system: 's', messages: [{ role: 'user', content: `use ${secret}` }], tools: [] },
          response: null,
          error: null,
          latencyMs: 1,
        }),
      );
    }
    const raw = new BetterSqlite3(file, { readonly: true });
    const stored = raw.prepare<[], { message_json: string }>('select message_json from model_messages').all();
    raw.close();
    expect(stored.map((row) => row.message_json)).toEqual([
      JSON.stringify({ role: 'user', content: 'use [REDACTED]' }),
    ]);
  });
});
