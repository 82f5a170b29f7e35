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

  it('knows the tree a checkpoint left from the checkpoint itself: the next question asks git nothing', async () => {
    await writeFile(join(repo.dir, 'src', 'math.js'), 'export const add = (a, b) => a + b;\n');
    workspace.changed();
    const commit = await workspace.checkpoint('feat: add');
    const before = statusReads();
    expect(await workspace.hasChanges()).toBe(false);
    expect(await workspace.changedFilesSince(commit)).toEqual([]);
    // The script's own status counts; no process was started for the questions.
    expect(statusReads()).toBe(before);
    // What the tests leave after it is seen once told so.
    await writeFile(join(repo.dir, 'made-by-tests.txt'), 'x\n');
    workspace.changed();
    expect(await workspace.changedFilesSince(commit)).toEqual(['made-by-tests.txt']);
  });

  it('keeps the status across its own writes for the checks before a commit, and answers exactly after them', async () => {
    const head = await workspace.head();
    expect(await workspace.changedFilesSince(head)).toEqual([]);
    const reads = statusReads();
    await workspace.writeFile('test-list.md', '- [x] add\n');
    await workspace.removeFile('src/math.js');
    const commit = await workspace.checkpoint('chore: list');
    // The checks before the commit needed no `git status`: the one kept and the two paths written.
    expect(statusReads()).toBe(reads + 1); // the commit script's own
    expect(repo.run('show', '--name-status', '--format=', commit).split('\n').sort()).toEqual([
      'A\ttest-list.md',
      'D\tsrc/math.js',
    ]);
    // An exact question after a write of its own asks git.
    await workspace.writeFile('src/math.js', 'export const add = (a, b) => a + b;\n');
    expect(await workspace.changedFilesSince(commit)).toEqual(['src/math.js']);
  });

  it('refuses the link the tests planted before one of its own writes: a kept status never hides it', async () => {
    const head = await workspace.head();
    expect(await workspace.changedFilesSince(head)).toEqual([]);
    // The tests run (and say so) and plant a link; a question reads it; then the workflow marks
    // its test list done, and the checkpoint's checks go by the status kept and that write.
    await symlink('/', join(repo.dir, 'escape'));
    workspace.changed();
    expect(await workspace.changedFilesSince(head)).toEqual(['escape']);
    const reads = statusReads();
    await workspace.writeFile('test-list.md', '- [x] add\n');
    const refused = await workspace.checkpoint('feat: add').catch((error: unknown) => error);
    expect(statusReads()).toBe(reads);
    expect(isRatchetError(refused, 'gate-failed')).toBe(true);
    expect(repo.run('log', '--format=%s', '-1')).not.toBe('feat: add');
  });

  it('refuses the link planted after the status was read, at a path it writes through afterwards', async () => {
    const head = await workspace.head();
    expect(await workspace.changedFilesSince(head)).toEqual([]);
    // A link planted where the workspace then writes is taken out by the write itself (never
    // followed); the kept status plus the written path still name everything that is new.
    await symlink('/', join(repo.dir, 'docs'));
    workspace.changed();
    expect(await workspace.changedFilesSince(head)).toEqual(['docs']);
    await workspace.writeFile('docs/notes.md', 'notes\n');
    const commit = await workspace.checkpoint('docs: notes');
    expect(repo.run('show', '--name-status', '--format=', commit)).toBe('A\tdocs/notes.md');
  });
});
