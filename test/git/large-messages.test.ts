/**
 * Finding 10 of issue 11: a checkpoint's note travelled in an environment variable, and a test
 * list of ~140 KB made every checkpoint fail with `spawn E2BIG` (Linux caps one variable or
 * argument at 128 KiB). Messages and notes go through files now: 200 KB of each commit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

/** About 200 KB of text: a long test list, one item a line. */
function bigText(label: string): string {
  const lines = Array.from({ length: 4000 }, (_, index) => `- [ ] ${label} item ${index} ${'x'.repeat(36)}`);
  return `${lines.join('\n')}\n`;
}

describe('commitAllWithNote with large texts', () => {
  let repo: TempRepo;
  beforeEach(async () => {
    repo = await createTempRepo();
  });
  afterEach(async () => {
    await repo.cleanup();
  });

  it('commits a 200 KB message with a 200 KB note, both byte for byte', async () => {
    const body = bigText('message');
    const message = `plan: a long test list\n\n${body}`;
    const note = JSON.stringify({ pendingTests: bigText('note').split('\n') }, null, 2) + '\n';
    expect(Buffer.byteLength(message)).toBeGreaterThan(200_000);
    expect(Buffer.byteLength(note)).toBeGreaterThan(200_000);
    await writeFile(join(repo.dir, 'test-list.md'), body);

    const sha = await repo.git.commitAllWithNote(
      message,
      { allowEmpty: false },
      {
        ref: 'tdd-handoffs',
        text: note,
      },
    );

    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.run('log', '-1', '--format=%B', sha ?? '')).toBe(message.trimEnd());
    expect(await repo.git.readNote('tdd-handoffs', sha ?? '')).toBe(note);
  });

  it('commits a 200 KB message without a note', async () => {
    const message = `feat: big\n\n${bigText('only')}`;
    await writeFile(join(repo.dir, 'a.txt'), 'a\n');
    const sha = await repo.git.commitAllWithNote(message, { allowEmpty: false });
    expect(repo.run('log', '-1', '--format=%B', sha ?? '')).toBe(message.trimEnd());
    expect(await repo.git.readNote('tdd-handoffs', sha ?? '')).toBeNull();
  });
});
