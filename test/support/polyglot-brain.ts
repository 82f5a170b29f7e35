/**
 * The scripted model of the `ratchet bench polyglot` tests: the fallback of the fake Anthropic
 * server that solves the fixture's exercises (`test/fixtures/polyglot/`) the way a model would,
 * through the Write tool: it writes each exercise's example solution into its solution files.
 * For the exercises named in `wrongFirst`, try 1 writes `wrong` instead, so try 2 must come with
 * the official tests' output as feedback. Requests of parallel exercises interleave, so every
 * reply is decided from its request alone: the exercise from `Exercise: <name> (<language>)` in
 * the user prompt, the try from the retry feedback, the turn from the assistant messages.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { blocksOf, bodySchema, textOf } from './anthropic-request.js';
import { E2E_API_KEY, E2E_MODEL } from './e2e-run.js';
import type { AnthropicReply, FakeUsage, RecordedRequest } from './fake-anthropic-server.js';
import { runCli, type CliResult } from './run-cli.js';

export const POLYGLOT_FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'polyglot');

/** Where `.ci/run` installs jest for the JavaScript exercises (toolchain `polyglot-jest`). */
export const POLYGLOT_JS_CACHE = join(homedir(), '.cache', 'ratchet-tools', 'polyglot-js');

/** Every model reply says it used this many tokens, so the cost of a call is known in advance. */
export const POLYGLOT_USAGE: FakeUsage = { inputTokens: 1000, outputTokens: 100 };

const configSchema = z.object({
  files: z.object({ solution: z.array(z.string()), example: z.array(z.string()) }),
});

/** The example solution of an exercise, as the files its solution files should hold. */
export function exampleSolution(language: string, exercise: string): Record<string, string> {
  const dir = join(POLYGLOT_FIXTURE, language, 'exercises', 'practice', exercise);
  const config = configSchema.parse(JSON.parse(readFileSync(join(dir, '.meta', 'config.json'), 'utf8')));
  const files: Record<string, string> = {};
  config.files.example.forEach((example, index) => {
    const solution = config.files.solution[index];
    if (solution !== undefined) files[solution] = readFileSync(join(dir, example), 'utf8');
  });
  return files;
}

export interface PolyglotCall {
  exercise: string;
  language: string;
  try: number;
  turn: number;
  /** The user prompt of the conversation (its first message). */
  prompt: string;
}

export interface PolyglotBrain {
  reply(request: RecordedRequest): AnthropicReply;
  readonly calls: PolyglotCall[];
  readonly unexpected: string[];
  /** The output of every tool call, as sent back to the model (the Bash `probe`'s first). */
  readonly toolResults: string[];
}

export interface PolyglotBrainOptions {
  /** Exercises whose try 1 writes these files instead of the example solution. */
  wrongFirst?: Readonly<Record<string, Record<string, string>>>;
  /** A shell command the model runs (Bash) before it writes anything: an attacker looking around. */
  probe?: string;
}

export function createPolyglotBrain(options: PolyglotBrainOptions = {}): PolyglotBrain {
  const wrongFirst = options.wrongFirst ?? {};
  const calls: PolyglotCall[] = [];
  const unexpected: string[] = [];
  const toolResults: string[] = [];
  const text = (say: string): AnthropicReply => ({
    kind: 'message',
    content: [{ type: 'text', text: say }],
    usage: POLYGLOT_USAGE,
  });
  return {
    calls,
    unexpected,
    toolResults,
    reply(request) {
      const body = bodySchema.safeParse(request.body);
      if (!body.success) {
        unexpected.push('unreadable request');
        return text('?');
      }
      const system = body.data.system === undefined ? '' : textOf(body.data.system);
      const first = body.data.messages[0];
      const prompt =
        first === undefined
          ? ''
          : blocksOf(first.content)
              .map((block) => textOf(block))
              .join('\n');
      const found = /^Exercise: (\S+) \((\S+)\)$/m.exec(prompt);
      if (!system.startsWith('Stage: EXERCISE') || found === null) {
        unexpected.push(`not an EXERCISE request: ${system.split('\n')[0] ?? ''}`);
        return text('Nothing scripted.');
      }
      const [, exercise = '', language = ''] = found;
      const attempt = prompt.includes('Your solution failed') ? 2 : 1;
      let turn = body.data.messages.filter((message) => message.role === 'assistant').length;
      calls.push({ exercise, language, try: attempt, turn, prompt });
      const last = body.data.messages.at(-1);
      if (turn > 0 && last !== undefined) {
        for (const block of blocksOf(last.content))
          if (block.type === 'tool_result') toolResults.push(textOf(block.content));
      }
      if (options.probe !== undefined) {
        if (turn === 0) {
          return {
            kind: 'message',
            usage: POLYGLOT_USAGE,
            content: [
              { type: 'text', text: 'Looking around first.' },
              { type: 'tool_use', name: 'Bash', input: { command: options.probe } },
            ],
          };
        }
        turn -= 1;
      }
      if (turn > 0) return text('The solution is written.');
      const files =
        attempt === 1
          ? (wrongFirst[exercise] ?? exampleSolution(language, exercise))
          : exampleSolution(language, exercise);
      return {
        kind: 'message',
        usage: POLYGLOT_USAGE,
        content: [
          { type: 'text', text: `Writing ${Object.keys(files).join(', ')}.` },
          ...Object.entries(files).map(([file_path, content]) => ({
            type: 'tool_use' as const,
            name: 'Write',
            input: { file_path, content },
          })),
        ],
      };
    },
  };
}

/** `ratchet bench polyglot <benchmark> --mode … --tries … --out …` through the built CLI, against a fake Anthropic server. */
export function runBenchPolyglot(options: {
  dir: string;
  benchmark: string;
  mode: 'direct' | 'tdd' | 'solve';
  tries: number;
  out: string;
  /** The fake Anthropic server's URL. */
  baseUrl: string;
  /** The sandbox flags of this machine (`sandboxForThisMachine().flags`). */
  flags: readonly string[];
  /** `--js-cache`: where jest is installed (the JavaScript exercises). */
  jsCache?: string;
}): Promise<CliResult> {
  return runCli(
    [
      'bench',
      'polyglot',
      options.benchmark,
      '--mode',
      options.mode,
      '--provider',
      'anthropic',
      '--model',
      E2E_MODEL,
      '--tries',
      String(options.tries),
      '--out',
      options.out,
      ...(options.jsCache === undefined ? [] : ['--js-cache', options.jsCache]),
      ...options.flags,
    ],
    {
      cwd: options.dir,
      env: {
        RATCHET_HOME: join(options.dir, 'home'),
        ANTHROPIC_BASE_URL: options.baseUrl,
        ANTHROPIC_API_KEY: E2E_API_KEY,
      },
      timeoutMs: 300_000,
    },
  );
}
