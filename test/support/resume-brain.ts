/**
 * A stateless scripted "model" for the resume / interrupt end-to-end tests, installed as the
 * fallback of the fake Anthropic server. Every answer is a pure function of the request:
 *
 * - the stage is the first line of the system prompt (`Stage: RED`, DESIGN.md, Prompts);
 * - the test item is found in the stage's user prompt (PLAN: the first unchecked line of the
 *   test list it is shown; other stages: the item's test file path, which appears only in the
 *   "current test" lines);
 * - the turn is the number of assistant messages already in the conversation;
 * - the attempt is read from "Attempt N of M" where the prompt has one.
 *
 * So a run that was killed and resumed gets exactly the answers an uninterrupted run gets for the
 * same stage, which is what makes "the same commits as the reference run" a meaningful check.
 *
 * The project is a tiny node:test package: one function per test-list item, each in its own test
 * and implementation file. The script includes one deterministic rejection: the first GREEN
 * attempt for `subtract` adds instead of subtracting, the gate rejects it, and attempt 2 is right.
 */
import { z } from 'zod';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

export interface ResumeItem {
  /** Text of the test-list item (after `- [ ] `). */
  description: string;
  fn: string;
  testFile: string;
  implFile: string;
  test: string;
  stub: string;
  impl: string;
  /** A first GREEN attempt that the gate must reject (tests still fail). */
  wrongImpl?: string;
}

function item(
  fn: string,
  description: string,
  call: string,
  expected: number,
  body: string,
  wrongBody?: string,
): ResumeItem {
  const source = (code: string): string => `export function ${fn}(a, b) {\n  return ${code};\n}\n`;
  return {
    description,
    fn,
    testFile: `test/${fn}.test.js`,
    implFile: `src/${fn}.js`,
    test: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${fn} } from '../src/${fn}.js';\n\ntest('${description}', () => {\n  assert.equal(${call}, ${expected});\n});\n`,
    stub: source('0'),
    impl: source(body),
    ...(wrongBody === undefined ? {} : { wrongImpl: source(wrongBody) }),
  };
}

export const RESUME_ITEMS: readonly ResumeItem[] = [
  item('add', 'add returns the sum of two numbers', 'add(2, 3)', 5, 'a + b'),
  item('subtract', 'subtract returns the difference of two numbers', 'subtract(7, 2)', 5, 'a - b', 'a + b'),
];

export const RESUME_TEST_LIST = `# Test list: a tiny arithmetic module\n\n${RESUME_ITEMS.map((entry) => `- [ ] ${entry.description}`).join('\n')}\n`;

/**
 * The commit subjects an uninterrupted run makes, oldest first: per item `plan:`, `test:`,
 * `feat:`, `refactor:` (REFACTOR always runs and finds nothing to change), then the final PLAN.
 */
export const RESUME_REFERENCE_SUBJECTS: readonly string[] = [
  ...RESUME_ITEMS.flatMap((entry) => [
    `plan: ${entry.description}`,
    `test: ${entry.description}`,
    `feat: ${entry.description}`,
    'refactor: no changes needed',
  ]),
  'plan: all tests done',
];

/** The files of the project's initial commit. */
export const RESUME_PROJECT_FILES: Readonly<Record<string, string>> = {
  'README.md': '# arithmetic\n\nBuilt test-first by the resume tests.\n',
  'package.json': `${JSON.stringify({ name: 'resume-arith', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test-list.md': RESUME_TEST_LIST,
};

/** One request as the brain understood it. */
export interface BrainCall {
  stage: string;
  turn: number;
  attempt: number;
  item: ResumeItem | null;
}

export interface ResumeBrainOptions {
  /** Milliseconds to hold a reply before answering (and between streamed events); 0 or undefined = none. */
  delayMs?: (call: BrainCall) => number | undefined;
}

export interface ResumeBrain {
  /** The fallback for `FakeAnthropicServer.setFallback`. */
  reply(request: RecordedRequest): AnthropicReply;
  /** Replaceable at any time (e.g. drop the delay before resuming). */
  delayMs: ((call: BrainCall) => number | undefined) | undefined;
  /** When set and it returns a reply, that reply replaces the script's (e.g. an API error). */
  override: ((call: BrainCall) => AnthropicReply | undefined) | undefined;
  /** Every `/v1/messages` request answered so far, as understood. */
  readonly calls: BrainCall[];
  /** Resolves with the first call at index >= `since` that matches (already made or still to come). */
  waitForCall(predicate: (call: BrainCall) => boolean, since?: number): Promise<BrainCall>;
}

const textBlock = z.object({ type: z.literal('text'), text: z.string() });
const contentSchema = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);
const bodySchema = z.looseObject({
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: contentSchema })),
});

function textOf(content: z.infer<typeof contentSchema> | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block) => textBlock.safeParse(block))
    .flatMap((parsed) => (parsed.success ? [parsed.data.text] : []))
    .join('\n');
}

/** Reads stage, turn, attempt and item from a Messages request. */
export function understand(body: unknown): BrainCall {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) return { stage: 'UNKNOWN', turn: 0, attempt: 1, item: null };
  const system = textOf(parsed.data.system).trim();
  const stage = /^Stage:\s*(\S+)/.exec(system)?.[1] ?? 'UNKNOWN';
  const messages = parsed.data.messages;
  const turn = messages.filter((message) => message.role === 'assistant').length;
  const prompt = textOf(messages.find((message) => message.role === 'user')?.content);
  const attempt = Number(/Attempt (\d+) of \d+/.exec(prompt)?.[1] ?? '1');
  let found: ResumeItem | null;
  if (stage === 'PLAN') {
    const pending = /^\s*-\s+\[ \]\s+(.+?)\s*$/m.exec(prompt)?.[1];
    found = RESUME_ITEMS.find((entry) => entry.description === pending) ?? null;
  } else {
    found = RESUME_ITEMS.find((entry) => prompt.includes(entry.testFile)) ?? null;
  }
  return { stage, turn, attempt, item: found };
}

const write = (file_path: string, content: string): AnthropicContentBlock => ({
  type: 'tool_use',
  name: 'Write',
  input: { file_path, content },
});
const say = (text: string): AnthropicContentBlock => ({ type: 'text', text });

/** The scripted answer for one understood request. */
export function scriptedContent(call: BrainCall): AnthropicContentBlock[] {
  const { stage, turn, item: current } = call;
  if (stage === 'PLAN') {
    if (turn > 0) return [say('Done.')];
    const currentTest =
      current === null
        ? null
        : { description: current.description, testFile: current.testFile, implFile: current.implFile };
    return [
      say(current === null ? 'Every item is checked.' : `Next: ${current.description}.`),
      { type: 'tool_use', name: 'StructuredOutput', input: { currentTest } },
    ];
  }
  if (current === null) return [say('I cannot tell which test case this is about.')];
  switch (stage) {
    case 'RED':
    case 'RED_FIX':
      return turn === 0
        ? [
            say(`A failing test for ${current.fn}, with a stub so it fails on its assertion.`),
            write(current.testFile, current.test),
            write(current.implFile, current.stub),
          ]
        : [say(`The ${current.fn} test fails on its assertion.`)];
    case 'GREEN': {
      if (turn > 0) return [say(`${current.fn} implemented.`)];
      const code = call.attempt === 1 && current.wrongImpl !== undefined ? current.wrongImpl : current.impl;
      return [say(`Implement ${current.fn}.`), write(current.implFile, code)];
    }
    case 'FIX':
      return turn === 0 ? [say(`Fix ${current.fn}.`), write(current.implFile, current.impl)] : [say('Fixed.')];
    case 'REFACTOR':
      return [say('The code is minimal already: no refactoring needed.')];
    default:
      return [say('ok')];
  }
}

/** Creates the brain; install it with `server.setFallback((request) => brain.reply(request))`. */
export function createResumeBrain(options: ResumeBrainOptions = {}): ResumeBrain {
  const waiters = new Set<{ predicate: (call: BrainCall) => boolean; resolve: (call: BrainCall) => void }>();
  const brain: ResumeBrain = {
    delayMs: options.delayMs,
    override: undefined,
    calls: [],
    reply(request) {
      const call = understand(request.body);
      brain.calls.push(call);
      for (const waiter of waiters) {
        if (waiter.predicate(call)) {
          waiters.delete(waiter);
          waiter.resolve(call);
        }
      }
      const replaced = brain.override?.(call);
      if (replaced) return replaced;
      const delay = brain.delayMs?.(call);
      return { kind: 'message', content: scriptedContent(call), ...(delay ? { delayMs: delay } : {}) };
    },
    waitForCall(predicate, since = 0) {
      const made = brain.calls.slice(since).find(predicate);
      if (made) return Promise.resolve(made);
      return new Promise((resolve) => waiters.add({ predicate, resolve }));
    },
  };
  return brain;
}
