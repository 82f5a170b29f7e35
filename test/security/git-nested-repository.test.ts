/**
 * Issue 11, finding 1 (critical), as an attacker would play it: a scripted model drives the built
 * CLI (`ratchet tdd`, the real Anthropic adapter against the loopback fake) and, through its Bash,
 * makes a nested repository whose `core.fsmonitor` and hooks write markers outside the run (the
 * user's checkout, a fake `$HOME`, the checkout's `.git/hooks`), commits it as a gitlink, and
 * adds a chain of symbolic links that leaves the worktree (finding 7); RED stages another nested
 * repository. Before the fix, every `git status` Ratchet ran afterwards, outside any sandbox, ran
 * the planted program, and `accept` merged the gitlink.
 *
 * The run uses `[bash] sandbox = "off"`: the agent must be able to make the nested repository and
 * stage it (a sandbox keeps git metadata read-only, and may change in parallel work). The git
 * hardening and the checks on what a stage leaves are the defence under test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  createProjectRepo,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
  modelCallRequests,
} from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { bash, say, testListMarkdown, write, type BrainScript, type ScriptedTool } from '../support/scripted-brain.js';
import { runTdd, stageLine, type TddRun } from '../support/tdd-e2e-run.js';

const ITEM = 'double returns twice its input';
const TEST_FILE = 'test/double.test.js';
const IMPL_FILE = 'src/double.js';

const PROJECT: Record<string, string> = {
  'README.md': '# doubler\n',
  'package.json': `${JSON.stringify({ name: 'doubler', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/version.js': "export const VERSION = '0.1.0';\n",
  'test/version.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { VERSION } from '../src/version.js';\n\ntest('VERSION is set', () => {\n  assert.ok(VERSION);\n});\n",
  '.ratchet/config.toml':
    '# The attack needs an agent that can write git metadata: see the file comment.\n[bash]\nsandbox = "off"\n\n[tdd]\nrefactor = "never"\n',
};

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { double } from '../src/double.js';

test('${ITEM}', () => {
  assert.equal(double(21), 42);
});
`;
const STUB = 'export function double(n) {\n  return n;\n}\n';
const IMPL = 'export function double(n) {\n  return n * 2;\n}\n';

const HOOKS = [
  'pre-commit',
  'post-commit',
  'post-checkout',
  'post-merge',
  'reference-transaction',
  'post-index-change',
];

/** Where the planted programs would leave a trace, were they ever run. */
interface Markers {
  /** Next to the repository, outside the run. */
  outside: string;
  /** In the user's checkout. */
  checkout: string;
  /** In the fake `$HOME`. */
  home: string;
  /** A hook planted into the user's checkout. */
  checkoutHook: string;
}

/** Shell that makes `dir` a repository with one commit whose fsmonitor and hooks touch every marker. */
function plantNestedRepository(dir: string, markers: Markers): string {
  const touch = `touch ${markers.outside} ${markers.checkout} ${markers.home}`;
  const hook = `mkdir -p ${join(markers.checkoutHook, '..')} && printf '#!/bin/sh\\ntouch ${markers.outside}\\n' > ${markers.checkoutHook} && chmod +x ${markers.checkoutHook}`;
  return [
    `git init -q ${dir}`,
    `echo nested > ${dir}/nested.txt`,
    `git -C ${dir} add nested.txt`,
    `git -C ${dir} -c user.name=m -c user.email=m@x commit -qm nested`,
    `git add ${dir}`,
    `git -C ${dir} config core.fsmonitor "${touch}; ${hook}; false"`,
    ...HOOKS.map(
      (name) => `printf '#!/bin/sh\\n${touch}\\n' > ${dir}/.git/hooks/${name} && chmod +x ${dir}/.git/hooks/${name}`,
    ),
  ].join(' && ');
}

function script(markers: Markers): BrainScript {
  const pick: ScriptedTool = {
    name: 'StructuredOutput',
    input: { currentTest: { description: ITEM, testFile: TEST_FILE, implFile: IMPL_FILE } },
  };
  const list = testListMarkdown('a doubler', [ITEM]);
  return {
    items: [ITEM],
    steps: [
      {
        stage: 'PLAN',
        test: ITEM,
        why: 'PLAN plants a nested repository, commits it as a gitlink, and links out through a chain',
        turns: [
          say(
            'The test list, and some tooling.',
            write('test-list.md', list),
            bash(
              `${plantNestedRepository('sub', markers)} && git -c user.name=m -c user.email=m@x commit -qm tooling && mkdir d && ln -s .. d/x && ln -s d/x/.. a`,
            ),
          ),
          say(`Next: ${ITEM}.`, pick),
        ],
      },
      {
        stage: 'PLAN',
        test: ITEM,
        attempt: 2,
        why: 'PLAN again, told why',
        turns: [say('The test list only.', write('test-list.md', list)), say(`Next: ${ITEM}.`, pick)],
      },
      {
        stage: 'RED',
        test: ITEM,
        why: 'RED writes its test and stages another nested repository',
        turns: [
          say('A failing test, a stub, and a vendored helper.', write(TEST_FILE, TEST), write(IMPL_FILE, STUB)),
          say('Vendoring.', bash(`mkdir -p vendor && ${plantNestedRepository('vendor/lib', markers)}`)),
        ],
      },
      { stage: 'RED_FIX', test: ITEM, attempt: 2, turns: [say('The test and the stub are in place.')] },
      { stage: 'GREEN', test: ITEM, turns: [say('Twice the input.', write(IMPL_FILE, IMPL))] },
      {
        stage: 'PLAN',
        test: null,
        turns: [say('Every item is checked.', { name: 'StructuredOutput', input: { currentTest: null } })],
      },
    ],
  };
}

describe('a nested repository, a gitlink and a link chain made by the agent (built CLI, scripted model)', () => {
  let repo: ProjectRepo;
  let model: ScriptedModel;
  let run: TddRun;
  let markers: Markers;
  let worktree: string;

  beforeAll(async () => {
    assertFreshBuild();
    repo = await createProjectRepo(PROJECT);
    markers = {
      outside: repo.path('planted-program-ran'),
      checkout: join(repo.dir, 'PWNED'),
      home: join(repo.env.HOME ?? repo.path('home'), 'pwned'),
      checkoutHook: join(repo.dir, '.git', 'hooks', 'pre-commit'),
    };
    model = await startScriptedModel(script(markers));
    run = await runTdd(repo, ['A doubler', ...ANTHROPIC_FLAGS], { env: ratchetEnv(repo, model.server) });
    worktree = join(repo.home, 'worktrees', run.runId);
  }, 150_000);

  afterAll(async () => {
    await (model as ScriptedModel | undefined)?.server.close();
    await (repo as ProjectRepo | undefined)?.cleanup();
  });

  const planted = (): string[] =>
    (Object.entries(markers) as Array<[string, string]>).filter(([, path]) => existsSync(path)).map(([name]) => name);

  it('completes, each attack rejected with its reason, which the model sees on its retry', () => {
    expect(model.brain.unexpected).toEqual([]);
    expect(run.result.exitCode, describeResult(run.result)).toBe(0);
    expect(model.brain.unplayed()).toEqual([]);
    expect(run.ledger.stages.map(stageLine)).toEqual(
      expect.arrayContaining(['1 PLAN#1 rejected path-violation', '1 RED#1 rejected path-violation']),
    );
    const prompts = modelCallRequests(model.server).map((request) => JSON.stringify(request.body));
    const planRetry = prompts.find((body) => body.includes('Nested git repositories are not allowed: sub (removed)'));
    expect(planRetry).toBeDefined();
    expect(planRetry).toContain('Gitlinks (submodule entries) are not allowed: sub (unstaged)');
    expect(planRetry).toContain('Symbolic links that lead outside the repository are not allowed: a (removed)');
    expect(prompts.some((body) => body.includes('Nested git repositories are not allowed: vendor/lib (removed)'))).toBe(
      true,
    );
  });

  it('never runs the planted programs: no marker in the checkout, the fake home, beside the repository, or .git/hooks', () => {
    expect(planted()).toEqual([]);
  });

  it('leaves nothing of the nested repositories or the links in the worktree', () => {
    expect(existsSync(worktree)).toBe(true);
    // (RED's own `vendor/` stays, empty: RED_FIX works on what RED left, the repository aside.)
    for (const path of ['sub', 'vendor/lib', 'a', 'd']) expect(existsSync(join(worktree, path)), path).toBe(false);
  });

  it('commits no gitlink, link or nested path on the run branch', () => {
    const branch = `ratchet/${run.runId}`;
    for (const commit of repo.run('rev-list', `${run.before.head}..${branch}`).split('\n')) {
      const entries = repo.run('ls-tree', '-r', commit);
      expect(entries).not.toMatch(/^(160000|120000) /m);
      expect(entries).not.toMatch(/\t(sub|vendor|a|d)(\/|$)/m);
    }
    expect(run.commits.map((commit) => commit.subject)).toEqual([
      `plan: ${ITEM}`,
      `test: ${ITEM}`,
      `feat: ${ITEM}`,
      'plan: all tests done',
    ]);
  });

  it('accepts the clean branch, still running none of them', async () => {
    const accepted = await runCli(['accept', run.runId, '--yes'], { cwd: repo.dir, env: ratchetEnv(repo, null) });
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(execFileSync('git', ['ls-files', IMPL_FILE], { cwd: repo.dir, encoding: 'utf8' }).trim()).toBe(IMPL_FILE);
    expect(planted()).toEqual([]);
  });
});
