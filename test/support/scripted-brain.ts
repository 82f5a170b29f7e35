/**
 * A "scripted brain" for end-to-end tests: the fallback of the fake Anthropic server that plays
 * the model in a real `ratchet tdd` run. It reads each `/v1/messages` request the way a model
 * would see it and answers from a table (one per test project):
 *
 * - the stage from the first line of the system prompt (`Stage: RED`);
 * - the test-list item from the user prompt: the item whose `<text> (test: ...` appears in it, or
 *   for PLAN the first unchecked item of the test list it shows (`null` when none remain);
 * - the attempt from `Attempt N of M` in the user prompt; prompts without that line (RED,
 *   REFACTOR, PLAN) count the distinct first user messages seen for the same stage and item, so
 *   a REFACTOR retried after a rollback (whose prompt carries the rollback feedback) is attempt 2
 *   while a retried HTTP request (the same prompt) stays the same attempt;
 * - the turn from the number of assistant messages in the conversation.
 *
 * Each table entry (`ScriptStep`) scripts one attempt of one stage as a list of turns, each a
 * short text plus tool calls with the input shapes of Claude Code's tools (see DESIGN.md,
 * Tools). After the last scripted turn that had tool calls, the brain closes the stage with a
 * short text. Anything the table does not cover is answered with a harmless text and recorded
 * in `unexpected`, so a test can fail with a readable explanation instead of a hung run.
 *
 * ```ts
 * const brain = createScriptedBrain(script);
 * server.setFallback((request) => brain.reply(request));
 * // ... run the CLI ...
 * expect(brain.unexpected).toEqual([]);
 * expect(brain.unplayed()).toEqual([]);
 * ```
 */
import { blocksOf, bodySchema, planItem, textOf } from './anthropic-request.js';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

/** The agent stages a model is asked to play (VERIFY and RE_VERIFY run no model). */
export type BrainStage = 'PLAN' | 'RED' | 'RED_FIX' | 'GREEN' | 'FIX' | 'REFACTOR';

export interface PlanAnswer {
  currentTest: { description: string; testFile: string; implFile: string } | null;
}

/** A tool call, with the input shapes of Claude Code's tools. */
export type ScriptedTool =
  | { name: 'Write'; input: { file_path: string; content: string } }
  | { name: 'Edit'; input: { file_path: string; old_string: string; new_string: string; replace_all?: boolean } }
  | { name: 'Bash'; input: { command: string; timeout?: number } }
  | { name: 'Read'; input: { file_path: string } }
  | { name: 'StructuredOutput'; input: PlanAnswer };

/** One model reply: some text, then tool calls (none: the stage ends with this text). */
export interface ScriptedTurn {
  say: string;
  tools?: ScriptedTool[];
}

/** One attempt of one stage. */
export interface ScriptStep {
  stage: BrainStage;
  /** The test-list item the stage works on; for PLAN the item it picks (null: "all done"). */
  test: string | null;
  /** Default 1. RED_FIX attempts start at 2 (RED is attempt 1); FIX counts from 1. */
  attempt?: number;
  turns: ScriptedTurn[];
  /**
   * Answer the first request of turn `turn` (default 0) with this error reply instead; the
   * client's retry of the same request then gets the scripted turn.
   */
  failFirst?: { reply: AnthropicReply; turn?: number };
  /** What this step demonstrates (shown in failure messages). */
  why?: string;
}

export interface BrainScript {
  /** The test-list items, in order (used to recognise the item in prompts). */
  items: readonly string[];
  steps: readonly ScriptStep[];
}

/** How the brain understood one request. */
export interface BrainCall {
  stage: string;
  test: string | null;
  attempt: number;
  turn: number;
  /** What was answered: `turn`, `close`, `error`, or `unexpected`. */
  answer: 'turn' | 'close' | 'error' | 'unexpected';
}

export interface ToolErrorSeen {
  stage: string;
  test: string | null;
  tool: string;
  output: string;
}

export interface ScriptedBrain {
  /** The fallback for the fake server: `server.setFallback((r) => brain.reply(r))`. */
  reply(request: RecordedRequest): AnthropicReply;
  /** Every request, as understood, in arrival order. */
  readonly calls: BrainCall[];
  /** Requests the table had no answer for, described for a failure message. */
  readonly unexpected: string[];
  /** Tool results the model got back with `is_error` (each once). */
  readonly toolErrors: ToolErrorSeen[];
  /** Steps whose first turn was never requested, with their `why`. */
  unplayed(): string[];
}

// ---------------------------------------------------------------------------------------------
// Table-building helpers

export const write = (file_path: string, content: string): ScriptedTool => ({
  name: 'Write',
  input: { file_path, content },
});
export const edit = (file_path: string, old_string: string, new_string: string): ScriptedTool => ({
  name: 'Edit',
  input: { file_path, old_string, new_string },
});
export const bash = (command: string): ScriptedTool => ({ name: 'Bash', input: { command } });
export const read = (file_path: string): ScriptedTool => ({ name: 'Read', input: { file_path } });
export const say = (text: string, ...tools: ScriptedTool[]): ScriptedTurn =>
  tools.length > 0 ? { say: text, tools } : { say: text };

/** The markdown checklist PLAN writes in the first cycle. */
export function testListMarkdown(title: string, items: readonly string[]): string {
  return `# Test list: ${title}\n\n${items.map((item) => `- [ ] ${item}`).join('\n')}\n`;
}

/**
 * The PLAN steps of a run that works through `items` in order: cycle 1 writes `test-list.md`
 * and picks the first item, later cycles pick the next one, and the last PLAN answers null.
 */
export function planSteps(
  title: string,
  items: ReadonlyArray<{ text: string; testFile: string; implFile: string }>,
): ScriptStep[] {
  const texts = items.map((item) => item.text);
  const pick = (index: number): ScriptedTool => {
    const item = items[index];
    if (item === undefined) return { name: 'StructuredOutput', input: { currentTest: null } };
    return {
      name: 'StructuredOutput',
      input: { currentTest: { description: item.text, testFile: item.testFile, implFile: item.implFile } },
    };
  };
  return [
    ...items.map((item, index): ScriptStep => ({
      stage: 'PLAN',
      test: item.text,
      turns:
        index === 0
          ? [
              say('I will write the test list first.', write('test-list.md', testListMarkdown(title, texts))),
              say(`Next: ${item.text}.`, pick(0)),
            ]
          : [say(`Next: ${item.text}.`, pick(index))],
    })),
    { stage: 'PLAN', test: null, turns: [say('Every item is checked.', pick(items.length))] },
  ];
}

interface Understood {
  stage: string;
  test: string | null;
  firstPrompt: string;
  explicitAttempt: number | undefined;
  turn: number;
  toolResults: Array<{ id: string; tool: string; output: string; isError: boolean }>;
}

function understand(body: unknown, items: readonly string[]): Understood | string {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) return `unreadable request body: ${parsed.error.issues[0]?.message ?? ''}`;
  const { system, messages } = parsed.data;
  const systemText = system === undefined ? '' : textOf(system);
  const stage = /^\s*Stage: (\w+)/.exec(systemText)?.[1];
  if (stage === undefined) return `no "Stage: X" first line in the system prompt: ${systemText.slice(0, 80)}`;
  const first = messages[0];
  const firstPrompt = first === undefined ? '' : textOf(first.content);
  const explicit = /Attempt (\d+) of \d+/.exec(firstPrompt)?.[1];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    for (const block of blocksOf(message.content))
      if (block.type === 'tool_use' && block.id) toolNames.set(block.id, block.name ?? '?');
  }
  const last = messages.at(-1);
  const toolResults = (last === undefined ? [] : blocksOf(last.content))
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      id: block.tool_use_id ?? '',
      tool: toolNames.get(block.tool_use_id ?? '') ?? '?',
      output: textOf(block.content),
      isError: block.is_error === true,
    }));
  return {
    stage,
    test:
      stage === 'PLAN'
        ? planItem(firstPrompt, items)
        : (items.find((item) => firstPrompt.includes(`${item} (test: `)) ?? null),
    firstPrompt,
    explicitAttempt: explicit === undefined ? undefined : Number(explicit),
    turn: messages.filter((message) => message.role === 'assistant').length,
    toolResults,
  };
}

function toContent(turn: ScriptedTurn): AnthropicContentBlock[] {
  return [
    { type: 'text', text: turn.say },
    ...(turn.tools ?? []).map((tool): AnthropicContentBlock => ({
      type: 'tool_use',
      name: tool.name,
      input: tool.input,
    })),
  ];
}

const key = (stage: string, test: string | null, attempt: number): string =>
  `${stage} | ${test ?? '(none)'} | attempt ${attempt}`;

/** Creates a brain playing `script`; use one brain per run. */
export function createScriptedBrain(script: BrainScript): ScriptedBrain {
  const steps = new Map<string, ScriptStep>();
  for (const step of script.steps) {
    const name = key(step.stage, step.test, step.attempt ?? 1);
    if (steps.has(name)) throw new Error(`scripted brain: two steps for ${name}`);
    steps.set(name, step);
  }
  const played = new Set<string>();
  const failed = new Set<string>();
  const prompts = new Map<string, string[]>();
  const seenToolResults = new Set<string>();
  const calls: BrainCall[] = [];
  const unexpected: string[] = [];
  const toolErrors: ToolErrorSeen[] = [];

  const attemptOf = (request: Understood): number => {
    if (request.explicitAttempt !== undefined) return request.explicitAttempt;
    const name = key(request.stage, request.test, 0);
    const seen = prompts.get(name) ?? [];
    if (!seen.includes(request.firstPrompt)) seen.push(request.firstPrompt);
    prompts.set(name, seen);
    return seen.indexOf(request.firstPrompt) + 1;
  };

  const reply = (request: RecordedRequest): AnthropicReply => {
    const understood = understand(request.body, script.items);
    if (typeof understood === 'string') {
      unexpected.push(understood);
      return { kind: 'message', content: [{ type: 'text', text: 'The scripted brain could not read this request.' }] };
    }
    const { stage, test, turn } = understood;
    const attempt = attemptOf(understood);
    for (const result of understood.toolResults) {
      if (!result.isError || seenToolResults.has(result.id)) continue;
      seenToolResults.add(result.id);
      toolErrors.push({ stage, test, tool: result.tool, output: result.output });
    }
    const name = key(stage, test, attempt);
    const step = steps.get(name);
    const answer = (kind: BrainCall['answer'], value: AnthropicReply): AnthropicReply => {
      calls.push({ stage, test, attempt, turn, answer: kind });
      return value;
    };
    if (step === undefined) {
      unexpected.push(`no step for ${name} (turn ${turn})`);
      return answer('unexpected', {
        kind: 'message',
        content: [{ type: 'text', text: 'I have nothing scripted for this.' }],
      });
    }
    played.add(name);
    const failKey = `${name} | turn ${turn}`;
    if (step.failFirst && (step.failFirst.turn ?? 0) === turn && !failed.has(failKey)) {
      failed.add(failKey);
      return answer('error', step.failFirst.reply);
    }
    const scripted = step.turns[turn];
    if (scripted) return answer('turn', { kind: 'message', content: toContent(scripted) });
    const previous = step.turns[turn - 1];
    if (turn === step.turns.length && previous?.tools && stage !== 'PLAN') {
      return answer('close', { kind: 'message', content: [{ type: 'text', text: `Done with ${stage}.` }] });
    }
    unexpected.push(`${name}: turn ${turn} is past the script (${step.turns.length} turns)`);
    return answer('unexpected', {
      kind: 'message',
      content: [{ type: 'text', text: 'I have nothing more scripted.' }],
    });
  };

  return {
    reply,
    calls,
    unexpected,
    toolErrors,
    unplayed: () =>
      script.steps
        .filter((step) => !played.has(key(step.stage, step.test, step.attempt ?? 1)))
        .map((step) => `${key(step.stage, step.test, step.attempt ?? 1)}${step.why ? ` (${step.why})` : ''}`),
  };
}
