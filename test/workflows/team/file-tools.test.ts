import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, readdir, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyApprovedWrite, createTeamFileTools } from '../../../src/workflows/team/file-tools.js';
import { iterationPolicy } from '../../../src/workflows/team/policy.js';
import { FileAccessSchema } from '../../../src/workflows/team/types.js';
import { createProcessRunner } from '../../../src/process/runner.js';
import { collectEvents, teamContext, types } from './team-fixtures.js';

describe('team file tools through the file guard', () => {
  let root: string;
  let workspace: string;
  let outside: string;
  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'team-files-')));
    workspace = join(root, 'workspace');
    outside = join(root, 'outside');
    await mkdir(join(workspace, '.git'), { recursive: true });
    await mkdir(outside);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const access = FileAccessSchema.parse({ writable_paths: ['docs/**'] });
  const tools = () => {
    let next = 0;
    return createTeamFileTools({
      workspace,
      access,
      nextApprovalId: () => `a${++next}`,
      phase: 'refinement',
      runner: createProcessRunner(),
    });
  };
  const write = (file_path: string, content = 'x\n') => ({ id: 'c1', name: 'Write', input: { file_path, content } });

  it('writes inside the writable paths at once', async () => {
    const outcome = await tools().execute('agent-1', write('docs/plan.md', '# plan\n'));
    expect(outcome).toMatchObject({
      isError: false,
      approval: null,
      operation: { outcome: 'written', path: 'docs/plan.md' },
    });
    expect(await readFile(join(workspace, 'docs/plan.md'), 'utf8')).toBe('# plan\n');
  });

  it('turns a write elsewhere in the workspace into a pending approval and writes nothing until approved', async () => {
    const outcome = await tools().execute('agent-2', write('src/app.js', 'run()\n'));
    expect(outcome.operation.outcome).toBe('pending-approval');
    expect(outcome.approval).toMatchObject({ id: 'a1', agent: 'agent-2', path: 'src/app.js', status: 'pending' });
    expect(existsSync(join(workspace, 'src/app.js'))).toBe(false);
    const approval = outcome.approval;
    if (approval === null) throw new Error('no approval');
    expect(await applyApprovedWrite({ workspace, access, approval, runner: createProcessRunner() })).toEqual({
      ok: true,
    });
    expect(await readFile(join(workspace, 'src/app.js'), 'utf8')).toBe('run()\n');
  });

  it('refuses, never as an approval, paths outside the workspace, through a symlink, in .git or protected', async () => {
    await symlink(outside, join(workspace, 'docs-link'));
    for (const path of [
      '../outside/escaped.txt',
      join(outside, 'abs.txt'),
      'docs-link/escaped.txt',
      '.git/hooks/pre-commit',
      '.team/team.json',
    ]) {
      const outcome = await tools().execute('agent-1', write(path));
      expect(outcome, path).toMatchObject({ isError: true, approval: null, operation: { outcome: 'refused' } });
    }
    expect(await readdir(outside)).toEqual([]);
    expect(existsSync(join(workspace, '.git/hooks/pre-commit'))).toBe(false);
  });

  it('refuses an approved write when a symlink was put in its way since the request', async () => {
    const outcome = await tools().execute('agent-1', write('src/later.txt'));
    const approval = outcome.approval;
    if (approval === null) throw new Error('no approval');
    await symlink(outside, join(workspace, 'src'));
    const applied = await applyApprovedWrite({ workspace, access, approval, runner: createProcessRunner() });
    expect(applied.ok).toBe(false);
    expect(existsSync(join(outside, 'later.txt'))).toBe(false);
  });

  it('makes the engine pause for approvals after the turn that asked for one', async () => {
    const ctx = teamContext({ file_access: access });
    const policy = iterationPolicy({
      config: ctx.config,
      iteration: { id: 'iter-1', description: 'x', status: 'in-progress', phase: 'refinement', max_turns: 6 },
      groomedSummary: null,
      tasksSummary: null,
      diffsSummary: null,
      fileTools: true,
    });
    const { events, clients } = await collectEvents(ctx, policy, {
      files: tools(),
      scripts: { 'agent-1': [{ toolCalls: [write('src/main.js')] }, { text: 'Asked to write src/main.js.' }] },
    });
    expect(types(events).slice(-4)).toEqual([
      'AppendMessage',
      'ApprovalRequested',
      'AppendMessage',
      'PauseForApprovals',
    ]);
    expect(events.at(-1)).toEqual({ type: 'PauseForApprovals', pendingCount: 1 });
    expect(JSON.stringify(clients.get('agent-1')?.requests[1]?.messages)).toContain('pending the product manager');
    expect(clients.has('agent-2')).toBe(false);
  });
});
