/**
 * The model side of Claude Code's own tool loop in an end-to-end `ratchet tdd --provider
 * claude-code` run: the fallback of the fake Anthropic server that the REAL `claude` binary
 * talks to (one headless `claude -p` call per TDD stage, see src/agent/claude-code-runtime.ts).
 *
 * The CLI, not Ratchet, sends these requests, so they look like what Claude Code sends a model:
 * - `system` is a list of blocks (a billing header, the CLI's one-line identity, then the file
 *   given to `--system-prompt-file`): the stage is read from the `Stage: X` line among them;
 * - `messages[0]` is the user prompt, behind a `<system-reminder>` block; `{"role":"system"}`
 *   entries carry the environment, e.g. `Primary working directory: <worktree>`;
 * - the turn is the number of assistant messages so far; tool results come back in the last
 *   user message (`is_error: true` when a tool failed);
 * - every request carries the call's session id in `x-claude-code-session-id`.
 *
 * Each (stage, test-list item) is scripted as a list of turns, each some text plus tool calls
 * with the input shapes of Claude Code's tools; a turn without tool calls ends the call, and for
 * PLAN the `StructuredOutput` call does (the CLI stops on a valid structured output). Files are
 * addressed by absolute paths under the worktree the CLI names, and an existing file is Read in
 * an earlier turn before it is written, as Claude Code expects of a model. Anything the script
 * does not cover is answered with a harmless text and recorded in `unexpected`.
 */
import { posix } from 'node:path';
import { blocksOf, bodySchema, planItem, textOf } from './anthropic-request.js';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';
import { testListMarkdown } from './scripted-brain.js';

export const CLAUDE_FEATURE = 'Arithmetic helpers: add and subtract';
export const CLAUDE_TEST_FILE = 'test/math.test.js';
export const CLAUDE_IMPL_FILE = 'src/math.js';
export const CLAUDE_ITEMS = [
  'add returns the sum of two numbers',
  'subtract returns the difference of two numbers',
] as const;
const [ADD, SUB] = CLAUDE_ITEMS;

/** The repository's first commit; `.ratchet/config.toml` is added by the test (it names the binary). */
export const CLAUDE_PROJECT_FILES: Record<string, string> = {
  'README.md': '# math-kit\n\nSmall arithmetic helpers.\n',
  'package.json': `${JSON.stringify({ name: 'math-kit', version: '0.1.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/version.js': "export const VERSION = '0.1.0';\n",
  'test/version.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION } from '../src/version.js';

test('VERSION is a semantic version', () => {
  assert.match(VERSION, /^\\d+\\.\\d+\\.\\d+$/);
});
`,
};

const TEST_HEADER = (names: string): string =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${names} } from '../src/math.js';\n`;
const ADD_TEST = `\ntest('${ADD}', () => {\n  assert.equal(add(2, 3), 5);\n});\n`;
const SUB_TEST = `\ntest('${SUB}', () => {\n  assert.equal(subtract(5, 3), 2);\n});\n`;
const ADD_STUB = 'export function add(a, b) {\n  return 0;\n}\n';
const ADD_IMPL = 'export function add(a, b) {\n  return a + b;\n}\n';
const SUB_STUB = '\nexport function subtract(a, b) {\n  return 0;\n}\n';

/** `test/math.test.js` and `src/math.js` at the end of the run. */
export const CLAUDE_FINAL_TEST = `${TEST_HEADER('add, subtract')}${ADD_TEST}${SUB_TEST}`;
export const CLAUDE_FINAL_IMPL = `${ADD_IMPL}${SUB_STUB.replace('return 0;', 'return a - b;')}`;

/** A tool call with the input shape of Claude Code's tool of that name. */
export type ClaudeToolCall =
  | { name: 'Read'; input: { file_path: string } }
  | { name: 'Write'; input: { file_path: string; content: string } }
  | { name: 'Edit'; input: { file_path: string; old_string: string; new_string: string } }
  | { name: 'Bash'; input: { command: string; description: string } }
  | {
      name: 'StructuredOutput';
      input: { currentTest: { description: string; testFile: string; implFile: string } | null };
    };

/** One model reply: text, then tool calls (none: the call ends with this text). */
export interface ClaudeTurn {
  say: string;
  tools: ClaudeToolCall[];
}

/** The turns of one stage; `at` makes a worktree-relative path absolute. */
type StageScript = (at: (file: string) => string) => ClaudeTurn[];

const turn = (say: string, ...tools: ClaudeToolCall[]): ClaudeTurn => ({ say, tools });
const read = (file_path: string): ClaudeToolCall => ({ name: 'Read', input: { file_path } });
const write = (file_path: string, content: string): ClaudeToolCall => ({
  name: 'Write',
  input: { file_path, content },
});
const edit = (file_path: string, old_string: string, new_string: string): ClaudeToolCall => ({
  name: 'Edit',
  input: { file_path, old_string, new_string },
});
const pick = (item: string | null): ClaudeToolCall => ({
  name: 'StructuredOutput',
  input: {
    currentTest: item === null ? null : { description: item, testFile: CLAUDE_TEST_FILE, implFile: CLAUDE_IMPL_FILE },
  },
});

const key = (stage: string, item: string | null): string => `${stage} | ${item ?? '(none)'}`;

/** Every stage the run plays, keyed by stage and item, in the order they are expected. */
const SCRIPT = new Map<string, StageScript>([
  [
    key('PLAN', ADD),
    (at) => [
      turn(
        'I will write the test list first.',
        write(at('test-list.md'), testListMarkdown(CLAUDE_FEATURE, CLAUDE_ITEMS)),
      ),
      turn(`Next: ${ADD}.`, pick(ADD)),
    ],
  ],
  [
    key('RED', ADD),
    (at) => [
      turn(
        'A failing test for add, and a stub so that it fails on its assertion.',
        write(at(CLAUDE_TEST_FILE), `${TEST_HEADER('add')}${ADD_TEST}`),
        write(at(CLAUDE_IMPL_FILE), ADD_STUB),
      ),
      turn('Running the tests.', {
        name: 'Bash',
        input: { command: 'node --test', description: 'Run the test suite' },
      }),
      turn(`The new test "${ADD}" in ${CLAUDE_TEST_FILE} fails: expected 5, got 0.`),
    ],
  ],
  [
    key('GREEN', ADD),
    (at) => [
      turn('Reading the stub.', read(at(CLAUDE_IMPL_FILE))),
      turn('Implementing add.', edit(at(CLAUDE_IMPL_FILE), 'return 0;', 'return a + b;')),
      turn('add now returns the sum.'),
    ],
  ],
  [key('REFACTOR', ADD), () => [turn('The code is already minimal: no changes needed.')]],
  [key('PLAN', SUB), () => [turn(`Next: ${SUB}.`, pick(SUB))]],
  [
    key('RED', SUB),
    (at) => [
      turn('Reading the test and the implementation.', read(at(CLAUDE_TEST_FILE)), read(at(CLAUDE_IMPL_FILE))),
      turn(
        'A failing test for subtract, and a stub.',
        write(at(CLAUDE_TEST_FILE), `${TEST_HEADER('add, subtract')}${ADD_TEST}${SUB_TEST}`),
        write(at(CLAUDE_IMPL_FILE), `${ADD_IMPL}${SUB_STUB}`),
      ),
      turn(`The new test "${SUB}" fails: expected 2, got 0.`),
    ],
  ],
  [
    key('GREEN', SUB),
    (at) => [
      turn('Reading the stub.', read(at(CLAUDE_IMPL_FILE))),
      turn('Implementing subtract.', edit(at(CLAUDE_IMPL_FILE), 'return 0;', 'return a - b;')),
      turn('subtract now returns the difference.'),
    ],
  ],
  [key('REFACTOR', SUB), () => [turn('Nothing to refactor.')]],
  [key('PLAN', null), () => [turn('Every item is checked.', pick(null))]],
]);

/** How the brain understood one request. */
export interface ClaudeBrainCall {
  /** `x-claude-code-session-id`: one per `claude -p` call. */
  session: string;
  stage: string;
  item: string | null;
  turn: number;
}

export interface ClaudeToolError {
  stage: string;
  tool: string;
  output: string;
}

export interface ClaudeTddBrain {
  /** The fallback for the fake server: `server.setFallback((r) => brain.reply(r))`. */
  reply(request: RecordedRequest): AnthropicReply;
  /** Every request understood, in arrival order. */
  readonly calls: ClaudeBrainCall[];
  /** Requests the script had no answer for, described for a failure message. */
  readonly unexpected: string[];
  /** Tool results the CLI sent back with `is_error` (each once). */
  readonly toolErrors: ClaudeToolError[];
  /** Scripted stages never asked for. */
  unplayed(): string[];
}

/** Creates a brain playing the add/subtract script; use one per run. */
export function createClaudeTddBrain(): ClaudeTddBrain {
  const calls: ClaudeBrainCall[] = [];
  const unexpected: string[] = [];
  const toolErrors: ClaudeToolError[] = [];
  const seenResults = new Set<string>();
  /** The session that played each stage: a second session for the same stage is a retry. */
  const sessions = new Map<string, string>();
  const say = (text: string): AnthropicReply => ({ kind: 'message', content: [{ type: 'text', text }] });

  const reply = (request: RecordedRequest): AnthropicReply => {
    const parsed = bodySchema.safeParse(request.body);
    if (!parsed.success) {
      unexpected.push(`unreadable request body: ${parsed.error.issues[0]?.message ?? ''}`);
      return say('The brain could not read this request.');
    }
    const { system, messages } = parsed.data;
    const stage = /^Stage: (\w+)/m.exec(system === undefined ? '' : textOf(system))?.[1];
    if (stage === undefined) {
      unexpected.push(`no "Stage: X" line in the system prompt: ${JSON.stringify(system).slice(0, 200)}`);
      return say('Which stage is this?');
    }
    const header = request.headers['x-claude-code-session-id'];
    const session = typeof header === 'string' ? header : '(none)';
    const prompt = messages[0] === undefined ? '' : textOf(messages[0].content);
    const item =
      stage === 'PLAN'
        ? planItem(prompt, CLAUDE_ITEMS)
        : (CLAUDE_ITEMS.find((text) => prompt.includes(`${text} (test: `)) ?? null);
    const turnIndex = messages.filter((message) => message.role === 'assistant').length;
    calls.push({ session, stage, item, turn: turnIndex });

    const toolNames = new Map<string, string>();
    for (const message of messages)
      for (const block of blocksOf(message.content))
        if (block.type === 'tool_use' && block.id !== undefined) toolNames.set(block.id, block.name ?? '?');
    const last = messages.at(-1);
    for (const block of last === undefined ? [] : blocksOf(last.content)) {
      const id = block.tool_use_id ?? '';
      if (block.type !== 'tool_result' || block.is_error !== true || seenResults.has(id)) continue;
      seenResults.add(id);
      toolErrors.push({ stage, tool: toolNames.get(id) ?? '?', output: textOf(block.content) });
    }

    const name = key(stage, item);
    const script = SCRIPT.get(name);
    if (script === undefined) {
      unexpected.push(`no script for ${name} (turn ${turnIndex})`);
      return say('I have nothing scripted for this.');
    }
    const playedBy = sessions.get(name);
    if (playedBy !== undefined && playedBy !== session) unexpected.push(`${name} asked again in a new session`);
    sessions.set(name, session);

    const worktree = messages
      .map((message) => /Primary working directory: (\S+)/.exec(textOf(message.content))?.[1])
      .find((dir) => dir !== undefined);
    if (worktree === undefined) unexpected.push(`${name}: no "Primary working directory" in the request`);
    const at = (file: string): string => (worktree === undefined ? file : posix.join(worktree, file));
    const scripted = script(at)[turnIndex];
    if (scripted === undefined) {
      unexpected.push(`${name}: turn ${turnIndex} is past the script`);
      return say('I have nothing more scripted.');
    }
    const content: AnthropicContentBlock[] = [
      { type: 'text', text: scripted.say },
      ...scripted.tools.map((tool): AnthropicContentBlock => ({
        type: 'tool_use',
        name: tool.name,
        input: tool.input,
      })),
    ];
    return { kind: 'message', content };
  };

  return {
    reply,
    calls,
    unexpected,
    toolErrors,
    unplayed: () => [...SCRIPT.keys()].filter((name) => !sessions.has(name)),
  };
}
