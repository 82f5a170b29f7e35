/**
 * The solve workflow's IMPLEMENT edits are a write path of their own (no tool loop, no file
 * guard): a scripted model drives the built CLI (`ratchet solve`, the real Anthropic adapter
 * against the loopback fake) and answers each attempt of its one step with edits that try to
 * leave the worktree or weaken the gate: a path with `..`, an absolute path, a file under the
 * repository's `.git` (a hook), a file through a committed symbolic link that points outside,
 * then a change to the test script (`package.json`, which decides how the tests run). Every
 * attempt is refused (the last undone after it applied), the step fails, and nothing outside the
 * run changed: the outside directory, the checkout's hooks and files, and the run's branch holds
 * no change of any file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
} from '../support/fake-anthropic-server.js';
import { describeResult, parseNdjson, runCli, type JsonLine } from '../support/run-cli.js';
import { anthropicPrompt, SOLVE_FILES, STATS_JS } from '../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();

let server: FakeAnthropicServer;
let repo: TempRepo;
let outside: string;

function edit(file: string, search: string, replacement: string): string {
  return `<edit file="${file}">\n<search>\n${search}</search>\n<replacement>\n${replacement}</replacement>\n</edit>`;
}

/** The attack of each attempt of step s1, by the attempt number the retry prompt gives away. */
function attack(user: string): string {
  if (user.includes('Attempt 4:')) {
    return edit('package.json', '"test": "node --test"', '"test": "exit 0"');
  }
  if (user.includes('Attempt 3:')) {
    return `${edit('vendor/evil.js', '', 'export const owned = true;\n')}\n${edit('src/stats.js', '  return xs.reduce((sum, x) => sum + x, 1);\n', '  return xs.reduce((sum, x) => sum + x, 0);\n')}`;
  }
  if (user.includes('Attempt 2:')) return edit('.git/hooks/pre-commit', '', '#!/bin/sh\ntouch /tmp/owned\n');
  if (user.includes('Attempt 1:')) return edit(join(outside, 'planted.txt'), '', 'planted\n');
  // The worktree is $RATCHET_HOME/worktrees/<run>: three levels up is the directory holding `outside`.
  return edit('../../../outside/planted.txt', '', 'planted\n');
}

function brain(request: Parameters<typeof anthropicPrompt>[0]): AnthropicReply {
  const { system, user } = anthropicPrompt(request);
  const answer = (text: string): AnthropicReply => ({ kind: 'message', content: [{ type: 'text', text }] });
  switch (system.split('\n')[0]) {
    case 'Stage: META_PLAN':
      return answer(
        JSON.stringify({
          taskSummary: 'fix total',
          parts: [{ id: 'p1', description: 'fix total', affectedFiles: ['src/stats.js'] }],
        }),
      );
    case 'Stage: PART_PLAN':
      return answer(
        JSON.stringify({
          partId: 'p1',
          taskSummary: 'fix total',
          steps: [{ id: 's1', description: 'fix total', targetFiles: ['src/stats.js'] }],
        }),
      );
    case 'Stage: IMPLEMENT':
      return answer(attack(user));
    case 'Stage: ADJUSTMENT':
      return answer(JSON.stringify({ revisedSteps: [], rationale: 'nothing left' }));
    default:
      return answer(JSON.stringify({ grades: [] }));
  }
}

function stringField(line: JsonLine | undefined, key: string): string {
  const value = line?.[key];
  return typeof value === 'string' ? value : '';
}

beforeAll(async () => {
  server = await startFakeAnthropicServer();
  server.setFallback(brain);
  repo = await createTempRepo({
    files: { ...SOLVE_FILES, '.ratchet/config.toml': '[solve]\nmax_retries_per_step = 4\n' },
  });
  outside = repo.path('outside');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'keep.txt'), 'keep\n');
  await symlink(outside, join(repo.dir, 'vendor'));
  repo.run('add', 'vendor');
  repo.run('commit', '--quiet', '-m', 'vendor link');
});

afterAll(async () => {
  await server.close();
  await repo.cleanup();
});

it('refuses IMPLEMENT edits outside the worktree, into .git, through a symbolic link, or to the test script, and changes nothing outside the run', async () => {
  const hooksBefore = await readdir(join(repo.dir, '.git', 'hooks'));
  const env = {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-solve-attack-00000',
    RATCHET_HOME: repo.path('home'),
  };
  const result = await runCli(
    ['solve', 'fix total', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5', ...sandbox.flags, '--json'],
    {
      cwd: repo.dir,
      env,
    },
  );
  // No step succeeded: the run's gates failed.
  expect(result.exitCode, describeResult(result)).toBe(1);
  const events = parseNdjson(result.stdout);
  const attempts = events.filter((event) => event.type === 'solve-attempt-end');
  expect(attempts.map((event) => event.patchApplied)).toEqual([false, false, false, false, true]);
  const errors = attempts.map((event) => stringField(event, 'error'));
  expect(errors[0]).toContain('refused');
  expect(errors[1]).toContain('refused');
  expect(errors[2]).toContain('refused');
  expect(errors[3]).toContain('vendor is a symbolic link');
  // The test script changed: applied, then undone before any test ran.
  expect(errors[4]).toContain('your edits were undone');
  expect(events.filter((event) => event.type === 'verify-end')).toHaveLength(0);

  // Nothing outside the run changed.
  expect(await readdir(outside)).toEqual(['keep.txt']);
  expect(existsSync(repo.path('planted.txt'))).toBe(false);
  expect(await readdir(join(repo.dir, '.git', 'hooks'))).toEqual(hooksBefore);
  expect(await readFile(join(repo.dir, 'src', 'stats.js'), 'utf8')).toBe(STATS_JS);
  expect(repo.run('status', '--porcelain')).toBe('');
  // The run's branch changes no file (its commits are the plans and the failed step's record).
  const runId = stringField(
    events.find((event) => event.type === 'run-start'),
    'runId',
  );
  const changed = execFileSync('git', ['diff', '--name-only', 'HEAD', `ratchet/${runId}`], {
    cwd: repo.dir,
    encoding: 'utf8',
  });
  expect(changed.trim()).toBe('');
}, 120_000);
