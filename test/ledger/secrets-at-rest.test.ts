import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openLedger, secretsFromEnv } from '../../src/ledger/index.js';
import { eventFactory, modelRequest, modelResponse, testRunResult, useTempDir } from './helpers.js';

/** Recognised by its shape alone: it is not configured anywhere. */
const ANTHROPIC_KEY = 'sk-ant-api03-THIS-IS-SECRET-0123456789abcdefghijklmnopqrstuvwxyz-XYZ';
/** Only caught because it is configured (through the environment). */
const CUSTOM_SECRET = 'corp-internal-credential-7f3a9b2c';
const BEARER_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LWJlYXJlcg.Zm9vYmFy';
const SECRETS = [ANTHROPIC_KEY, CUSTOM_SECRET, BEARER_TOKEN];
/** Proves the surrounding data really was written. */
const MARKER = 'visible-marker-3141592653';
const RUN = 'run-secrets';

async function rawBytes(file: string): Promise<Buffer[]> {
  const files = [file, `${file}-wal`].filter((path) => existsSync(path));
  return Promise.all(files.map((path) => readFile(path)));
}

/** Every text value of every row of every table, read back through SQLite. */
function allText(file: string): string {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = db.prepare<[], { name: string }>("select name from sqlite_master where type = 'table'").all();
    return tables
      .flatMap(({ name }) => db.prepare(`select * from "${name}"`).all())
      .map((row) => JSON.stringify(row))
      .join('\n');
  } finally {
    db.close();
  }
}

describe('secrets at rest', () => {
  const temp = useTempDir();

  it('never writes a secret into the database or its WAL', async () => {
    const file = join(temp.dir, '.ratchet', 'ledger.db');
    const secrets = secretsFromEnv({
      CORP_TOKEN: CUSTOM_SECRET,
      HOME: '/home/u',
    });
    expect(secrets).toEqual([CUSTOM_SECRET]);
    const ledger = await openLedger(file, { secrets });
    const ev = eventFactory(RUN);

    await ledger.createRun({
      id: RUN,
      workflow: 'tdd',
      repoRoot: temp.dir,
      feature: `call the API with ${CUSTOM_SECRET} ${MARKER}`,
      config: {
        provider: 'anthropic',
        apiKey: ANTHROPIC_KEY,
        headers: { Authorization: `Bearer ${BEARER_TOKEN}` },
      },
    });
    const request = modelRequest(`My key is ${ANTHROPIC_KEY} and the db password is ${CUSTOM_SECRET}. ${MARKER}`);
    request.messages.push({
      role: 'tool',
      results: [
        {
          toolCallId: 't2',
          toolName: 'Bash',
          output: `ANTHROPIC_API_KEY=${ANTHROPIC_KEY}\nCORP_TOKEN=${CUSTOM_SECRET}`,
          isError: false,
        },
      ],
    });
    await ledger.recordMany([
      ev('run-start', {
        workflow: 'tdd',
        feature: `uses ${CUSTOM_SECRET}`,
        branch: 'b',
        worktree: '/w',
        baseCommit: 'c',
        resumed: false,
      }),
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 1, cycle: 1 }),
      ev('model-call', {
        stage: 'GREEN',
        provider: 'anthropic',
        model: 'm',
        request,
        response: modelResponse(`I will use ${ANTHROPIC_KEY} ${MARKER}`, { input: 10, output: 10 }, 0.001),
        error: null,
        latencyMs: 100,
      }),
      ev('model-call', {
        stage: 'GREEN',
        provider: 'anthropic',
        model: 'm',
        request,
        response: null,
        error: {
          code: 'auth',
          message: `401: invalid x-api-key: ${ANTHROPIC_KEY}`,
        },
        latencyMs: 100,
      }),
      ev('tool-call', {
        stage: 'GREEN',
        tool: 'Bash',
        input: {
          command: `curl -H "Authorization: Bearer ${BEARER_TOKEN}" -H "x-api-key: ${CUSTOM_SECRET}" https://api.test`,
        },
        output: `{"apiKey":"${CUSTOM_SECRET}","key":"${ANTHROPIC_KEY}"} ${MARKER}`,
        isError: false,
        durationMs: 5,
      }),
      ev('verify-end', {
        stage: 'GREEN',
        kind: 'test',
        result: testRunResult({
          command: `API_TOKEN=${CUSTOM_SECRET} npm test`,
          output: `env: ANTHROPIC_API_KEY=${ANTHROPIC_KEY} ${MARKER}\nFAIL expected ${CUSTOM_SECRET}`,
          tests: [
            {
              id: 't::x',
              name: 'x',
              file: 't',
              status: 'failed',
              failureKind: 'assertion',
              message: `expected '${CUSTOM_SECRET}' to be ''`,
            },
          ],
          collectionErrors: [`cannot import ${ANTHROPIC_KEY}`],
        }),
        outputFile: null,
      }),
      ev('stage-end', {
        stage: 'GREEN',
        phase: 'GREEN',
        attempt: 1,
        cycle: 1,
        outcome: 'rejected',
        reason: `leaked ${CUSTOM_SECRET}`,
      }),
      ev('checkpoint-create', {
        stage: 'GREEN',
        phase: 'GREEN',
        commit: 'c1',
        subject: `fix: stop logging ${CUSTOM_SECRET}`,
      }),
      ev('warning', { message: `retrying with Bearer ${BEARER_TOKEN}` }),
      ev('log', { message: `Authorization: Bearer ${BEARER_TOKEN} ${MARKER}` }),
    ]);
    await ledger.updateRun(RUN, {
      status: 'failed',
      error: `auth failed for ${ANTHROPIC_KEY}`,
    });

    const check = async (): Promise<void> => {
      const buffers = await rawBytes(file);
      expect(buffers.length).toBeGreaterThan(0);
      const everything = Buffer.concat(buffers);
      expect(everything.includes(MARKER)).toBe(true);
      for (const secret of SECRETS) expect(everything.includes(secret), secret).toBe(false);
      const text = allText(file);
      expect(text).toContain(MARKER);
      expect(text).toContain('[REDACTED]');
      for (const secret of SECRETS) expect(text, secret).not.toContain(secret);
      // Nor a fragment long enough to matter (page boundaries could split a whole secret).
      for (const secret of SECRETS) expect(everything.includes(secret.slice(-16)), secret).toBe(false);
    };

    // While open, most data sits in the WAL; after close it is checkpointed into the file.
    expect(existsSync(`${file}-wal`)).toBe(true);
    await check();
    const stored = await ledger.events(RUN);
    expect(JSON.stringify(stored)).not.toContain(CUSTOM_SECRET);
    await ledger.close();
    await check();
  });
});
