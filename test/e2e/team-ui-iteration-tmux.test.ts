/**
 * A whole iteration through `ratchet team ui` alone: the built binary in tmux (120x40), keys
 * typed with `send-keys`, the screen read with `capture-pane`, the loopback fake Anthropic
 * server playing three agents, the coach and the extractions (test/support/team-brain.ts).
 * From an empty team: the iteration started in the TUI (r, with `--max-turns`), one write
 * approved and one denied with a reason, the coach's question answered, every phase advanced,
 * tasks extracted into two layers, each layer's worktrees set up, reviewed (the diff scrolled)
 * and merged green by the verifier, code review run, and a checkpoint created and restored. What
 * the screen showed is asserted as it happens; the files and branches afterwards.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { CLI, cliEnv, PACKAGE_ROOT } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTeamBrain, type TeamBrain, type TeamReply } from '../support/team-brain.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

const tmux = toolchain('tmux');
const sandbox = sandboxForThisMachine();

const say = (text: string): TeamReply => ({ say: text });
/** One turn writing `files` (all in one reply), then a closing text. */
const implement = (files: Record<string, string>, text: string): TeamReply[] => [
  { tools: Object.entries(files).map(([file_path, content]) => ({ name: 'Write', input: { file_path, content } })) },
  { say: text },
];
const unitTest = (name: string, assertion: string) =>
  `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as m from '../src/${name}.js';\ntest('${name}', () => { ${assertion} });\n`;
const OPS = 'export const add = (a, b) => a + b;\nexport const sub = (a, b) => a - b;\n';
const OPS_TEST = unitTest('ops', 'assert.equal(m.sub(5, m.add(1, 2)), 2);');
/** Long enough that its diff needs scrolling in a 40-line terminal. */
const PARSER = `export const parse = (text) => text.split('+').map((part) => Number(part.trim()));\n${Array.from(
  { length: 40 },
  (_, index) => `export const token${index + 1} = ${index + 1};\n`,
).join('')}`;
const PARSER_TEST = unitTest('parser', "assert.deepEqual(m.parse('1 + 2'), [1, 2]);");
const CALC =
  "import { add } from './ops.js';\nimport { parse } from './parser.js';\nexport const calc = (text) => add(...parse(text));\n";
const CALC_TEST = unitTest('cli', "assert.equal(m.calc('1 + 2'), 3);");
const TASKS = [
  { id: 'ops', description: 'add and subtract', done_criteria: 'tests pass', depends_on: [], assigned_to: 'agent-1' },
  { id: 'parser', description: 'parse "1 + 2"', done_criteria: 'tests pass', depends_on: [], assigned_to: 'agent-2' },
  { id: 'cli', description: 'calc', done_criteria: 'prints 3', depends_on: ['ops', 'parser'], assigned_to: 'agent-3' },
];
const complete = (summary: string): TeamReply => ({
  tools: [{ name: 'signal_phase_complete', input: { summary } }],
});

describe.skipIf(tmux.missing)(`ratchet team ui drives a whole iteration in tmux${tmux.note}`, () => {
  let repo: TempRepo;
  let server: FakeAnthropicServer;
  let brain: TeamBrain;
  let socket: string;

  const tmuxRun = (...args: string[]): string =>
    execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: cliEnv({ TERM: 'xterm-256color' }) });
  const screen = (): string => tmuxRun('capture-pane', '-p', '-t', 'ui');
  /** Waits until the screen shows `text` (the TUI draws asynchronously); fails with the screen. */
  const shows = async (text: string | RegExp): Promise<string> => {
    for (let attempt = 0; attempt < 1200; attempt++) {
      const now = screen();
      if (typeof text === 'string' ? now.includes(text) : text.test(now)) return now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`The TUI never showed ${String(text)}; the screen:\n${screen()}`);
  };
  const type = (text: string): void => void tmuxRun('send-keys', '-t', 'ui', '-l', text);
  const press = (...keys: string[]): void => void tmuxRun('send-keys', '-t', 'ui', ...keys);
  /**
   * Esc back to the conversation, waiting until it is shown: an Escape and the next key that
   * reach the terminal together are read as one Alt-key, which only leaves the view.
   */
  const back = async (): Promise<void> => {
    press('Escape');
    await shows('c continue · m answer');
  };
  const iterationDir = () => join(teamDirOf(repo.dir), 'iterations', 'iter-1');
  const iterationJson = async () =>
    JSON.parse(await readFile(join(iterationDir(), 'iteration.json'), 'utf8')) as Record<string, unknown>;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({
      files: {
        'README.md': '# calc\n',
        // What the layer merges verify with.
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
      },
    });
    socket = `ratchet-test-${randomBytes(4).toString('hex')}`;
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 3 });
    const teamFile = join(teamDirOf(repo.dir), 'team.json');
    const config = JSON.parse(await readFile(teamFile, 'utf8')) as { file_access: Record<string, unknown> };
    config.file_access.writable_paths = ['docs/**', 'src/**', 'test/**'];
    await writeFile(teamFile, JSON.stringify(config));
    const env = cliEnv({
      ...repo.env,
      RATCHET_HOME: repo.path('ratchet-home'),
      HOME: repo.path('home'),
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-ui-000000000',
      TERM: 'xterm-256color',
    });
    const command = [
      process.execPath,
      CLI,
      'team',
      'ui',
      '--provider',
      'anthropic',
      '--model',
      'claude-team-e2e',
      '--max-turns',
      '6',
      ...sandbox.flags,
    ]
      .map((word) => `'${word.replace(/'/g, "'\\''")}'`)
      .join(' ');
    execFileSync(
      'tmux',
      [
        '-L',
        socket,
        'new-session',
        '-d',
        '-s',
        'ui',
        '-x',
        '120',
        '-y',
        '40',
        '-c',
        repo.dir,
        `${command}; echo "ratchet exited $?"; sleep 600`,
      ],
      { env },
    );
  });

  afterEach(async () => {
    try {
      tmuxRun('kill-server');
    } catch {
      // Already gone.
    }
    await server.close();
    await repo.cleanup();
  });

  it('from refinement to code review, every step through the keys', { timeout: 600_000 }, async () => {
    await shows('ratchet team · no iteration yet');

    // Refinement. agent-1 wants notes/ outside the writable paths: a pending write, approved.
    brain.script(
      'agent-1',
      { tools: [{ name: 'Write', input: { file_path: 'notes/plan.md', content: '# Plan\n' } }] },
      say('I proposed notes/plan.md.'),
    );
    press('r');
    await shows('Describe the new iteration:');
    type('A calculator CLI');
    press('Enter');
    await shows('ratchet team · iter-1 · phase refinement · turn 1/6');
    expect(await shows('Paused: 1 write(s) wait for approval')).toMatch(/▸ a1 {2}agent-1 → notes\/plan\.md/);
    const workspace = String((await iterationJson()).workspace);
    expect(existsSync(join(workspace, 'notes/plan.md'))).toBe(false);
    press('a');
    await shows('Approved a1: notes/plan.md written.');
    expect(await readFile(join(workspace, 'notes/plan.md'), 'utf8')).toBe('# Plan\n');

    // agent-2 wants to rewrite the README: denied, with a reason the agents are told.
    brain.script(
      'agent-2',
      { tools: [{ name: 'Write', input: { file_path: 'README.md', content: 'rewritten\n' } }] },
      say('I proposed a new README.'),
    );
    press('c');
    await shows(/▸ a2 {2}agent-2 → README\.md/);
    press('d');
    await shows('Why deny a2?');
    type('Keep the README as it is');
    press('Enter');
    await shows('Denied a2.');

    // agent-3 writes in docs/ at once; the coach asks the PM; the answer is typed in.
    brain.script(
      'agent-3',
      { tools: [{ name: 'Write', input: { file_path: 'docs/requirements.md', content: '# Requirements\n' } }] },
      say('Requirements written.'),
    );
    brain.script('coach', {
      say: 'One question first.',
      tools: [{ name: 'ask_pm', input: { question: 'Integers only?' } }],
    });
    press('c');
    await shows('Coach asks: Integers only?  (m to answer)');
    expect(brain.seen.get('agent-3')?.[0]).toContain('Keep the README as it is');
    brain.script('agent-1', say('Integers it is.'));
    brain.script('agent-2', { tools: [{ name: 'pass_turn', input: { reason: 'agreed' } }] });
    brain.script('agent-3', say('Agreed.'));
    brain.script('coach', complete('Scope agreed'));
    press('m');
    type('Integers only, please');
    press('Enter');
    const refined = await shows('Phase complete: Scope agreed  (n to advance)');
    expect(refined).toContain('pm: Integers only, please');
    expect(brain.seen.get('agent-1')?.at(-1)).toContain('[pm]: Integers only, please');

    // Planning: the tasks extracted into two layers.
    brain.script('EXTRACT_REFINEMENT', say('# Calculator\nIntegers only; add and subtract.'));
    press('n');
    await shows('Phase: refinement -> planning');
    await shows('phase planning');
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: tasks proposal`));
    brain.script('coach', complete('Tasks agreed'));
    press('c');
    await shows('Phase complete: Tasks agreed');
    brain.script('EXTRACT_TASKS', say(`\`\`\`json\n${JSON.stringify(TASKS)}\n\`\`\``));
    press('n');
    const planned = await shows('Phase: planning -> pre-code-review');
    expect(planned).toContain('layer 0: ops, parser');
    expect(planned).toContain('layer 1: cli');

    // Pre-code-review (a parallel round), then implementation at layer 0.
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: my approach`));
    brain.script('coach', {
      say: 'All approaches fit.',
      tools: [{ name: 'signal_phase_complete', input: { summary: 'Approaches agreed' } }],
    });
    press('c');
    await shows('Phase complete: Approaches agreed');
    brain.script('EXTRACT_NOTES', say('{"cli": "use process.argv"}'));
    press('n');
    await shows('phase implementation · turn 0/6 · layer 0');

    // A checkpoint of where implementation starts, created from the checkpoints view.
    press('p');
    await shows(/Checkpoints of iter-1 \(\d+\)/);
    press('c');
    await shows('Describe the checkpoint:');
    type('implementation starts');
    press('Enter');
    const saved = await shows(/Checkpoint (\d+) \(implementation\): implementation starts/);
    const checkpoint = /Checkpoint (\d+) \(implementation\): implementation starts/.exec(saved)?.[1] ?? '?';
    await back();

    // Layer 0: worktrees set up in the TUI, the agents write in them, a README write approved.
    press('w');
    await shows('Layer 0 of iteration iter-1 has no worktrees yet.');
    press('s');
    expect(await shows(/▸ ops {2}empty/)).toMatch(/ {2}parser {2}empty/);
    await back();
    brain.script('agent-1', ...implement({ 'src/ops.js': OPS, 'test/ops.test.js': OPS_TEST }, 'ops done.'));
    brain.script(
      'agent-2',
      ...implement(
        { 'src/parser.js': PARSER, 'test/parser.test.js': PARSER_TEST, 'README.md': '# calc\n\nParses 1 + 2.\n' },
        'parser done; README needs approval.',
      ),
    );
    brain.script('agent-3', say('I will wait for layer 1.'));
    press('c');
    await shows(/▸ a3 {2}agent-2 → README\.md/);
    press('a');
    await shows('Approved a3: README.md written.');

    // Review: each task's diff, scrolled; then the merge, verified green.
    press('w');
    const review0 = await shows(/▸ ops {2}ready {2}0 file\(s\) \+0 -0 {2}2 uncommitted/);
    expect(review0).toContain('New file src/ops.js (not committed yet):');
    expect(review0).toMatch(/ {2}parser {2}ready {2}0 file\(s\) \+0 -0 {2}3 uncommitted/);
    press('Down');
    await shows('New file src/parser.js (not committed yet):');
    press('j');
    expect(await shows(/diff lines 11-\d+ of \d+/)).toContain('export const token');
    press('M');
    const merged0 = await shows('Merged ops, parser: All 2 tests pass');
    expect(merged0).toContain('Layer 1 is next: setup starts it from the merged result.');

    // Layer 1 starts from the merged result; agent-3 implements it; merged green: every layer in.
    press('s');
    await shows(/▸ cli {2}empty/);
    await back();
    brain.script('coach', say('Layer 0 is merged; agent-3 takes the calc command.'));
    brain.script('agent-1', say('I will review cli.'));
    brain.script('agent-2', say('Ready to review.'));
    brain.script('agent-3', ...implement({ 'src/cli.js': CALC, 'test/cli.test.js': CALC_TEST }, 'cli done.'));
    brain.script('coach', complete('Both layers built'));
    press('c');
    await shows('Phase complete: Both layers built');
    press('w');
    await shows(/▸ cli {2}ready/);
    press('M');
    await shows('Merged cli: All 3 tests pass');
    await shows('Every layer is merged');
    await back();

    // Code review reads what the iteration changed.
    press('n');
    await shows('phase code-review');
    for (const agent of ['agent-1', 'agent-2', 'agent-3']) brain.script(agent, say(`${agent}: looks fine`));
    brain.script('coach', complete('Reviewed'));
    press('c');
    await shows('Phase complete: Reviewed');
    expect(brain.seen.get('agent-1')?.at(-1)).toContain('export const calc');

    // The checkpoint restores the iteration as implementation began.
    press('p');
    await shows('implementation starts');
    for (let up = 0; up < 20 && !/▸ +\d+ {2}implementation +\S+ {2}implementation starts/.test(screen()); up++) {
      press('Up');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    press('r');
    await shows(`Restore checkpoint ${checkpoint}?`);
    press('y');
    await shows(`Restored checkpoint ${checkpoint} (implementation): implementation starts`);
    await shows('phase implementation');
    press('q');
    await shows('ratchet exited 0');

    // The files: the iteration's branch holds both layers, the task branches stay, the user's checkout is as it was.
    expect(await iterationJson()).toMatchObject({ phase: 'implementation', current_layer: 0 });
    expect(await readFile(join(workspace, 'src/cli.js'), 'utf8')).toBe(CALC);
    expect(await readFile(join(workspace, 'src/parser.js'), 'utf8')).toBe(PARSER);
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toContain('Parses 1 + 2.');
    expect(await readFile(join(workspace, 'docs/requirements.md'), 'utf8')).toBe('# Requirements\n');
    const branches = repo.run('branch', '--list', '--format=%(refname:short)').split('\n');
    for (const task of ['L0-ops', 'L0-parser', 'L1-cli'])
      expect(branches.some((branch) => branch.startsWith('ratchet/team-iter-1-') && branch.endsWith(task))).toBe(true);
    expect(repo.run('status', '--porcelain')).toBe('');
    expect(await readFile(repo.path('repo', 'README.md'), 'utf8')).toBe('# calc\n');
    const log = (await readFile(join(iterationDir(), 'conversation.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(log.filter((msg) => msg.phase_boundary === true).map((msg) => msg.to_phase)).toEqual([
      'planning',
      'pre-code-review',
      'implementation',
    ]);
    expect(brain.unexpected).toEqual([]);
    expect(brain.unplayed()).toEqual([]);
  });
});
