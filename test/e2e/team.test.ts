import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { anthropicSolveBrain, SOLVE_TASK } from '../support/solve-fixture.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { teamDirOf } from '../../src/workflows/team/setup.js';

const say = (text: string) => ({ say: text });
const write = (file_path: string, content: string, text: string) => [
  { tools: [{ name: 'Write', input: { file_path, content } }] },
  { say: text },
];

/** One turn writing `files` (all in one reply), then a closing text. */
const implement = (files: Record<string, string>, text: string) => [
  { tools: Object.entries(files).map(([file_path, content]) => ({ name: 'Write', input: { file_path, content } })) },
  { say: text },
];
const setupJson = (stdout: string) => JSON.parse(stdout) as { tasks: Array<{ id: string; worktree: string }> };
const unitTest = (name: string, assertion: string) =>
  `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as m from '../src/${name}.js';\ntest('${name}', () => { ${assertion} });\n`;
const OPS = 'export const add = (a, b) => a + b;\nexport const sub = (a, b) => a - b;\n';
const OPS_TEST = unitTest('ops', 'assert.equal(m.sub(5, m.add(1, 2)), 2);');
const PARSER = "export const parse = (text) => text.split('+').map((part) => Number(part.trim()));\n";
const PARSER_TEST = unitTest('parser', "assert.deepEqual(m.parse('1 + 2'), [1, 2]);");
const CLI =
  "import { add } from './ops.js';\nimport { parse } from './parser.js';\nexport const calc = (text) => add(...parse(text));\n";
const CLI_TEST = unitTest('cli', "assert.equal(m.calc('1 + 2'), 3);");
const sandbox = sandboxForThisMachine();

const TASKS = [
  { id: 'ops', description: 'add and subtract', done_criteria: 'tests pass', depends_on: [], assigned_to: 'agent-1' },
  { id: 'parser', description: 'parse "1 + 2"', done_criteria: 'tests pass', depends_on: [], assigned_to: 'agent-2' },
  {
    id: 'cli',
    description: 'the calc command',
    done_criteria: 'prints 3',
    depends_on: ['ops', 'parser'],
    assigned_to: 'agent-3',
  },
];

describe('ratchet team through the Anthropic adapter (loopback fake)', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let brain: TeamBrain;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({
      files: {
        'README.md': '# calc\n',
        // What `team worktrees merge` verifies each layer with.
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
      },
    });
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-000000000000',
      RATCHET_HOME: repo.path('ratchet-home'),
    };
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  const team = async (...args: string[]) => {
    const result = await runCli(
      ['team', ...args, '--provider', 'anthropic', '--model', 'claude-team-e2e', ...sandboxForThisMachine().flags],
      {
        cwd: repo.dir,
        env,
      },
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    return result;
  };
  const plain = async (...args: string[]) => {
    const result = await runCli(['team', ...args], { cwd: repo.dir, env });
    expect(result.exitCode, describeResult(result)).toBe(0);
    return result;
  };
  const worktrees = async (...args: string[]) => {
    const result = await runCli(['team', 'worktrees', ...args, ...(args[0] === 'merge' ? sandbox.flags : [])], {
      cwd: repo.dir,
      env,
    });
    expect(result.exitCode, describeResult(result)).toBe(0);
    return result;
  };
  const iterationDir = () => join(teamDirOf(repo.dir), 'iterations', 'iter-1');
  const iterationJson = async () =>
    JSON.parse(await readFile(join(iterationDir(), 'iteration.json'), 'utf8')) as Record<string, unknown>;

  it('takes three agents and a coach from refinement to code review with approvals, ask_pm and two task layers', async () => {
    await plain('init', '--agents', '3');
    const teamFile = join(teamDirOf(repo.dir), 'team.json');
    const config = JSON.parse(await readFile(teamFile, 'utf8')) as { file_access: Record<string, unknown> };
    config.file_access.writable_paths = ['docs/**'];
    await writeFile(teamFile, JSON.stringify(config));

    // Refinement: agent-1 asks to write outside docs/ (approval a1), ...
    brain.script(
      'agent-1',
      ...write('src/calc.js', 'export const add = (a, b) => a + b;\n', 'I proposed src/calc.js.'),
    );
    const run = await team('run', 'A calculator CLI', '--max-turns', '6');
    expect(run.stdout).toContain('Paused: 1 write(s) wait for approval');
    const workspace = String((await iterationJson()).workspace);
    expect(existsSync(join(workspace, 'src/calc.js'))).toBe(false);

    const approved = await plain('approve', 'a1');
    expect(approved.stdout).toContain("approved agent-1's write to src/calc.js");
    expect(await readFile(join(workspace, 'src/calc.js'), 'utf8')).toContain('add');

    // ... agent-2 asks to rewrite the README (a2, denied) ...
    brain.script('agent-2', ...write('README.md', 'rewritten\n', 'I proposed a new README.'));
    await team('continue');
    const denied = await plain('deny', 'a2', '-m', 'Keep the README as it is');
    expect(denied.stdout).toContain('Keep the README as it is');

    // ... agent-3 writes in docs/ at once, and the coach asks the PM.
    brain.script('agent-3', ...write('docs/requirements.md', '# Requirements\n', 'Requirements written.'));
    brain.script('coach', {
      say: 'One question first.',
      tools: [{ name: 'ask_pm', input: { question: 'Integers only?' } }],
    });
    const asked = await team('continue');
    expect(asked.stdout).toContain('Coach asks: Integers only?');
    expect(brain.seen.get('agent-3')?.[0]).toContain('denied agent-2');
    expect(await readFile(join(workspace, 'docs/requirements.md'), 'utf8')).toBe('# Requirements\n');

    // The PM answers; the agents see it; the coach closes refinement.
    brain.script('agent-1', say('Integers it is.'));
    brain.script('agent-2', { tools: [{ name: 'pass_turn', input: { reason: 'agreed' } }] });
    brain.script('agent-3', say('Agreed.'));
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'Scope agreed' } }] });
    const answered = await team('continue', '-m', 'Integers only, please');
    expect(brain.seen.get('agent-1')?.at(-1)).toContain('[pm]: Integers only, please');
    expect(answered.stdout).toContain('The coach signals refinement complete: Scope agreed');

    brain.script('EXTRACT_REFINEMENT', say('# Calculator\nIntegers only; add and subtract.'));
    expect((await team('advance')).stdout).toContain('refinement -> planning');
    expect(await readFile(join(iterationDir(), 'groomed.md'), 'utf8')).toContain('Integers only');

    // Planning, then the tasks extraction in two layers.
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: tasks proposal`));
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'Tasks agreed' } }] });
    await team('continue');
    brain.script('EXTRACT_TASKS', say(`\`\`\`json\n${JSON.stringify(TASKS)}\n\`\`\``));
    const planned = await team('advance');
    expect(planned.stdout).toContain('layer 0: ops, parser');
    expect(planned.stdout).toContain('layer 1: cli');
    const tasks = JSON.parse(await readFile(join(iterationDir(), 'tasks.json'), 'utf8')) as Array<{
      id: string;
      layer: number;
    }>;
    expect(tasks.map((task) => [task.id, task.layer])).toEqual([
      ['ops', 0],
      ['parser', 0],
      ['cli', 1],
    ]);

    // Pre-code-review runs in parallel; the agents' prompts carry the tasks.
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: my approach`));
    brain.script('coach', {
      say: 'All approaches fit.',
      tools: [{ name: 'signal_phase_complete', input: { summary: 'Approaches agreed' } }],
    });
    const review = await team('continue');
    expect(review.stdout).toContain('parallel');
    expect(brain.seen.get('agent-2')?.at(-1)).toContain('layer 1: cli');
    brain.script('EXTRACT_NOTES', say('{"cli": "use process.argv"}'));
    await team('advance');
    expect(await iterationJson()).toMatchObject({ phase: 'implementation', current_layer: 0 });

    // Implementation, layer 0: each agent writes in its task's worktree; agent-3 has no task yet.
    config.file_access.writable_paths = ['docs/**', 'src/**', 'test/**'];
    await writeFile(teamFile, JSON.stringify(config));
    const layer0 = setupJson((await worktrees('setup', '--json')).stdout);
    const [ops, parser] = layer0.tasks;
    if (ops === undefined || parser === undefined) throw new Error('two tasks expected');
    brain.script('agent-1', ...implement({ 'src/ops.js': OPS, 'test/ops.test.js': OPS_TEST }, 'ops done.'));
    brain.script(
      'agent-2',
      ...implement(
        { 'src/parser.js': PARSER, 'test/parser.test.js': PARSER_TEST, 'README.md': '# calc\n\nParses 1 + 2.\n' },
        'parser done; README needs approval.',
      ),
    );
    brain.script('agent-3', ...implement({ 'src/cli.js': 'too early\n' }, 'I will wait for layer 1.'));
    const implemented = await team('continue');
    expect(implemented.stdout).toContain('Paused: 1 write(s) wait for approval');
    expect(brain.seen.get('agent-3')?.at(-1)).toContain('You have no task in layer 0');
    const approval = await plain('approve', 'a3');
    expect(approval.stdout).toContain("approved agent-2's write to README.md");
    expect(await readFile(join(parser.worktree, 'README.md'), 'utf8')).toContain('Parses 1 + 2.');
    // Nothing landed in the iteration's workspace, nor in the other task's worktree.
    for (const file of ['src/ops.js', 'src/parser.js', 'src/cli.js'])
      expect(existsSync(join(workspace, file))).toBe(false);
    expect(existsSync(join(ops.worktree, 'src/parser.js'))).toBe(false);
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('# calc\n');

    const reviewed0 = (await worktrees('review')).stdout;
    expect(reviewed0).toMatch(/ops  ready/);
    expect(reviewed0).toMatch(/uncommitted in .*L0-ops .*src\/ops\.js/);
    expect(reviewed0).toMatch(/uncommitted in .*L0-parser .*README\.md/);
    const merged0 = await worktrees('merge');
    expect(merged0.stdout).toMatch(/Merged ops, parser: All 2 tests pass/);
    expect(merged0.stdout).toContain('Layer 1 is next');

    // Layer 1 starts from the merged result; agent-3 implements it, the others only read.
    const [cli] = setupJson((await worktrees('setup', '--json')).stdout).tasks;
    if (cli === undefined) throw new Error('one task expected');
    expect(await readFile(join(cli.worktree, 'src/parser.js'), 'utf8')).toBe(PARSER);
    brain.script('coach', say('Layer 0 is merged; agent-3 takes the calc command.'));
    brain.script('agent-1', say('I will review cli.'));
    brain.script('agent-2', ...implement({ 'src/cli.js': 'not mine\n' }, 'Ready to review.'));
    brain.script('agent-3', ...implement({ 'src/cli.js': CLI, 'test/cli.test.js': CLI_TEST }, 'cli done.'));
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'Both layers built' } }] });
    await team('continue');
    expect(await readFile(join(cli.worktree, 'src/cli.js'), 'utf8')).toBe(CLI);
    expect((await worktrees('review')).stdout).toMatch(/uncommitted in .*L1-cli .*src\/cli\.js, test\/cli\.test\.js/);
    const merged1 = await worktrees('merge');
    expect(merged1.stdout).toMatch(/Merged cli: All 3 tests pass/);
    expect(merged1.stdout).toContain('Every layer is merged');
    expect(await readFile(join(workspace, 'src/cli.js'), 'utf8')).toBe(CLI);
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toContain('Parses 1 + 2.');

    // Code review reads what the iteration changed in its workspace.
    await team('advance');
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: looks fine`));
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'Reviewed' } }] });
    await team('continue');
    const reviewPrompt = brain.seen.get('agent-1')?.at(-1) ?? '';
    expect(reviewPrompt).toContain('export const add = (a, b) => a + b;');
    expect(reviewPrompt).toContain('docs/requirements.md');
    expect(reviewPrompt).toContain('export const parse');

    expect(brain.unexpected).toEqual([]);
    expect(brain.unplayed()).toEqual([]);
    const debug = (await readFile(join(iterationDir(), 'debug.jsonl'), 'utf8')).trim().split('\n');
    const stages = new Set(debug.map((line) => (JSON.parse(line) as { stage?: string }).stage));
    for (const stage of ['AGENT', 'COACH', 'EXTRACT_REFINEMENT', 'EXTRACT_TASKS', 'EXTRACT_NOTES'])
      expect(stages).toContain(stage);

    // The log keeps the seed's shape; the user's checkout never changed.
    const log = (await readFile(join(iterationDir(), 'conversation.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(log.every((msg) => typeof msg.from === 'string' && typeof msg.content === 'string')).toBe(true);
    expect(log.filter((msg) => msg.phase_boundary === true).map((msg) => msg.to_phase)).toEqual([
      'planning',
      'pre-code-review',
      'implementation',
      'code-review',
    ]);
    expect(log.some((msg) => msg.from === 'system' && msg.pass_turn === true)).toBe(true);
    expect(repo.run('status', '--porcelain')).toBe(''); // .team/ is kept out of git
    expect(await readFile(repo.path('repo', 'README.md'), 'utf8')).toBe('# calc\n');

    // A checkpoint restores the iteration exactly as it was when pre-code-review began.
    const listed = (await plain('checkpoint', 'list')).stdout;
    const entering = /^\s*(\d+)\s+pre-code-review\s+.*entering pre-code-review$/m.exec(listed)?.[1];
    expect(entering, listed).toBeDefined();
    await plain('checkpoint', 'restore', String(entering));
    expect(await iterationJson()).toMatchObject({ phase: 'pre-code-review' });
    const restored = JSON.parse(await readFile(join(iterationDir(), 'tasks.json'), 'utf8')) as Array<
      Record<string, unknown>
    >;
    expect(restored.some((task) => 'notes' in task)).toBe(false);
  });

  it('keeps a malformed tasks reply raw, says so, and still advances', async () => {
    await plain('init', '--agents', '3');
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say('ok'), say('ok'));
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'done' } }] });
    await team('run', 'calc', '--max-turns', '3');
    brain.script('EXTRACT_REFINEMENT', say('# Summary'));
    await team('advance');
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'done' } }] });
    await team('continue');
    brain.script('EXTRACT_TASKS', say('[{"id": "ops", '));
    const result = await team('advance');
    expect(result.stderr).toContain('Could not extract tasks.json');
    expect(await readFile(join(iterationDir(), 'tasks.raw.txt'), 'utf8')).toBe('[{"id": "ops", ');
    expect(existsSync(join(iterationDir(), 'tasks.json'))).toBe(false);
    expect(await iterationJson()).toMatchObject({ phase: 'pre-code-review' });
  });

  it('grooms a topic outside any iteration, and refuses to overwrite the team', async () => {
    await plain('init', '--agents', '3');
    const again = await runCli(['team', 'init'], { cwd: repo.dir, env });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('already set up');
    const result = await team('groom', 'Caching strategy', '--max-turns', '2');
    expect(result.stdout).toContain('agent-2');
    const log = await readFile(join(teamDirOf(repo.dir), 'grooming', 'caching-strategy', 'conversation.jsonl'), 'utf8');
    expect(log.trim().split('\n')).toHaveLength(2);
    expect(brain.seen.has('coach')).toBe(false);
    expect(existsSync(join(teamDirOf(repo.dir), 'iterations.json'))).toBe(false);
  });

  it('a continue at the turn limit saves no checkpoint and changes nothing, an answer included', async () => {
    await plain('init', '--agents', '2');
    brain.script('agent-1', say('A first thought.'));
    await team('run', 'A calculator', '--max-turns', '1');
    // Every file of .team/ with its content: what a continue at the limit must leave as it was.
    const snapshot = (): Record<string, string> => {
      const root = teamDirOf(repo.dir);
      const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) =>
        statSync(join(root, file)).isFile(),
      );
      return Object.fromEntries(files.sort().map((file) => [file, readFileSync(join(root, file), 'utf8')]));
    };
    const before = snapshot();
    expect(Object.keys(before).some((file) => file.includes('checkpoints'))).toBe(true);
    const asked = server.requests.length;
    for (const args of [['continue'], ['continue', '-m', 'Integers only, please']]) {
      const atLimit = await team(...args);
      expect(atLimit.stdout).toContain('ratchet team continue --max-turns N allows N more.');
      expect(atLimit.stdout).not.toContain('Checkpoint');
    }
    expect(server.requests.length).toBe(asked);
    expect(snapshot()).toEqual(before);
  });

  it('keeps .team/ out of git, so after a session the checkout is clean and the next run starts', async () => {
    await plain('init', '--agents', '2');
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
    brain.script('agent-1', say('A first thought.'));
    await team('run', 'A calculator', '--max-turns', '1');
    expect(existsSync(join(iterationDir(), 'conversation.jsonl'))).toBe(true);
    // A continue at the phase's limit takes no turn, and says so rather than "stopped after 1 turn".
    const asked = server.requests.length;
    const atLimit = await team('continue');
    expect(atLimit.stdout).toContain(
      "The phase's 1 agent turn(s) are used up. ratchet team continue --max-turns N allows N more.",
    );
    expect(server.requests.length).toBe(asked);
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
    // A run that refuses a dirty checkout starts (ratchet plan, which changes nothing).
    server.setFallback(anthropicSolveBrain);
    const planned = await runCli(
      [
        'plan',
        SOLVE_TASK,
        '--provider',
        'anthropic',
        '--model',
        'claude-team-e2e',
        '--stages',
        'scope',
        ...sandbox.flags,
      ],
      { cwd: repo.dir, env },
    );
    expect(planned.exitCode, describeResult(planned)).toBe(0);
    // The team's settings can still be shared: an added file is tracked, whatever the exclude says.
    repo.run('add', '-f', '.team/team.json');
    expect(repo.run('status', '--porcelain')).toBe('A  .team/team.json');
  });

  it('refuses to start an iteration in a repository without commits, leaving nothing behind', async () => {
    const empty = repo.path('empty');
    await mkdir(empty);
    execFileSync('git', ['init', '-q'], { cwd: empty, env: { ...process.env, ...repo.env } });
    const init = await runCli(['team', 'init'], { cwd: empty, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    const result = await runCli(['team', 'run', 'calc', '--provider', 'anthropic', '--model', 'm'], {
      cwd: empty,
      env,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('no commit yet');
    expect(existsSync(join(teamDirOf(empty), 'iterations.json'))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});
