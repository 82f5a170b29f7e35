/**
 * End to end (issue 13, point 7): commands that only read create nothing. In a repository shaped
 * like scopeguard with no runs, `refactor rollback nope` used to create `.ratchet/ledger.db`; now
 * it, `status`, `history`, `report`, `rollback`, `accept` and `reject` say there is no such run
 * (exit 2) and leave the checkout as it was, `.ratchet/` and `.git/info/exclude` included. And
 * `demo --dir` writes only into a new or empty directory.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPEGUARD } from '../support/real-repo-fixtures.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo } from '../support/temp-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('read-only commands in a repository without runs (issue 13)', () => {
  beforeAll(() => assertFreshBuild());

  it('refuse an unknown run (exit 2) and create neither .ratchet/ nor the ledger', async () => {
    const repo = await createTempRepo({ files: SCOPEGUARD });
    cleanups.push(() => repo.cleanup());
    const env = { ...repo.env, RATCHET_HOME: repo.path('ratchet-home') };
    const exclude = join(repo.dir, '.git', 'info', 'exclude');
    const excludeBefore = existsSync(exclude) ? readFileSync(exclude, 'utf8') : null;
    const commands = [
      ['refactor', 'rollback', 'nope', '--yes'],
      ['status'],
      ['status', 'nope'],
      ['history'],
      ['report'],
      ['rollback', 'nope'],
      ['accept', 'nope'],
      ['reject', 'nope'],
    ];
    for (const args of commands) {
      for (const json of [false, true]) {
        const result = await runCli(json ? [...args, '--json'] : args, { cwd: repo.dir, env });
        const what = `ratchet ${args.join(' ')}${json ? ' --json' : ''}: ${describeResult(result)}`;
        expect(result.exitCode, what).toBe(2);
        expect(`${result.stdout}${result.stderr}`, what).toMatch(
          /No run(s in this repository yet| nope in this repository)/,
        );
        expect(existsSync(join(repo.dir, '.ratchet')), what).toBe(false);
        expect(repo.run('status', '--porcelain', '--untracked-files=all'), what).toBe('');
        expect(existsSync(exclude) ? readFileSync(exclude, 'utf8') : null, what).toBe(excludeBefore);
      }
    }
    expect(existsSync(join(repo.path('ratchet-home')))).toBe(false);
  });
});

describe('ratchet demo --dir (issue 13)', () => {
  beforeAll(() => assertFreshBuild());

  it('refuses a directory that holds anything (exit 2, nothing written), and runs in an empty one', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-demo-dir-')));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const home = join(dir, 'home');
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };

    // The user's own directory, with their notes in it.
    const notes = join(dir, 'notes');
    await mkdir(notes);
    await writeFile(join(notes, 'todo.txt'), 'buy milk\n');
    const refused = await runCli(['demo', '--dir', notes], { cwd: dir, env });
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain(`--dir ${notes} is not empty (1 entry)`);
    expect(refused.stderr).toContain('hint: Pass --dir with a new or empty directory');
    expect(readdirSync(notes)).toEqual(['todo.txt']);

    const file = join(dir, 'a-file');
    await writeFile(file, 'x\n');
    const onFile = await runCli(['demo', '--dir', file], { cwd: dir, env });
    expect(onFile.exitCode, describeResult(onFile)).toBe(2);
    expect(onFile.stderr).toContain('is a file, not a directory');
    expect(readFileSync(file, 'utf8')).toBe('x\n');

    const empty = join(dir, 'empty');
    await mkdir(empty);
    const demo = await runCli(['demo', '--dir', empty], { cwd: dir, env });
    expect(demo.exitCode, describeResult(demo)).toBe(0);
    expect(readdirSync(empty).sort()).toEqual(['ratchet-home', 'stack-kata']);
  }, 90_000);
});
