/**
 * The git workspace's `statusUntilChanged` (the tasks pipeline's): `git status` is read once until
 * the work tree may have changed, and never kept past a change: every change made through the
 * workspace, and every `changed()` its caller reports (an agent's stage, a command run there),
 * makes the next question ask git again, so the checks before a checkpoint see what the tests made.
 */
import { existsSync, readFileSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { Git } from '../../src/git/git.js';
import { createGitWorkspace, type GitWorkspace } from '../../src/workflows/tdd/git-workspace.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let workspace: GitWorkspace;
let trace: string;

/** How many `git status` processes the workspace ran, as git itself reports them (trace2). */
function statusReads(): number {
  if (!existsSync(trace)) return 0;
  return readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"event":"cmd_name"') && line.includes('"name":"status"')).length;
}

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'src/math.js': 'export const add = () => 0;\n' } });
  trace = repo.path('git-trace.json');
  const git = new Git(repo.dir, { env: { ...repo.env, GIT_TRACE2_EVENT: trace } });
  workspace = createGitWorkspace(repo.dir, git, undefined, { statusUntilChanged: true });
});

afterEach(async () => {
  await repo.cleanup();
});

describe('git status until the work tree changes', () => {
  it('asks git once for questions with nothing changed between them', async () => {
    const head = await workspace.head();
    await writeFile(join(repo.dir, 'src', 'math.js'), 'export const add = (a, b) => a + b;\n');
    workspace.changed();
    expect(await workspace.changedFilesSince(head)).toEqual(['src/math.js']);
    expect(await workspace.hasChanges()).toBe(true);
    expect(await workspace.changedFilesSince(head)).toEqual(['src/math.js']);
    expect(statusReads()).toBe(1);
  });

  it('sees what changed once told so: a checkpoint refuses the link the tests planted after the last question', async () => {
    const head = await workspace.head();
    expect(await workspace.changedFilesSince(head)).toEqual([]);
    // The tests (the model's code) run and leave a link to the root of the machine.
    await symlink('/', join(repo.dir, 'escape'));
    workspace.changed();
    const refused = await workspace.checkpoint('test: t').catch((error: unknown) => error);
    expect(isRatchetError(refused, 'gate-failed')).toBe(true);
    expect(repo.run('log', '--format=%s', '-1')).not.toBe('test: t');
  });

  it('asks again after every change it makes itself: a file written, removed, a commit', async () => {
    const head = await workspace.head();
    expect(await workspace.changedFilesSince(head)).toEqual([]);
    await workspace.writeFile('src/new.js', 'export const x = 1;\n');
    expect(await workspace.changedFilesSince(head)).toEqual(['src/new.js']);
    const commit = await workspace.checkpoint('feat: new');
    expect(await workspace.hasChanges()).toBe(false);
    await workspace.removeFile('src/new.js');
    expect(await workspace.changedFilesSince(commit)).toEqual(['src/new.js']);
    await workspace.discardChanges();
    expect(await workspace.hasChanges()).toBe(false);
    await workspace.writeFile('src/other.js', 'x\n');
    workspace.refresh();
    expect(await workspace.hasChanges()).toBe(true);
    await workspace.resetTo(head);
    expect(await workspace.changedFilesSince(head)).toEqual([]);
  });
});
