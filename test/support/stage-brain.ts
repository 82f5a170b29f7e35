/**
 * A scripted model for the security tests: the fallback of the fake Anthropic server that plays
 * a list of stage attempts strictly in order, whatever the prompts say. Unlike `scripted-brain.ts`
 * it never recognises the test-list item in a prompt, so it keeps working when Ratchet redacts the
 * prompt (a test name holding a secret becomes `[REDACTED]`) or when the script's texts hold
 * escape sequences.
 *
 * A request whose conversation has no assistant message starts the next step, which must be of
 * the request's stage (`Stage: X`, the system prompt's first line); turn N answers with the step's
 * N-th turn, and the turn after a last turn with tool calls closes the attempt with a short text.
 * Every tool result the model gets back is kept in `toolResults`.
 */
import { blocksOf, bodySchema, textOf } from './anthropic-request.js';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';
import type { BrainStage, ScriptedTurn } from './scripted-brain.js';

export interface StageStep {
  stage: BrainStage;
  turns: ScriptedTurn[];
}

export interface SeenToolResult {
  stage: string;
  tool: string;
  output: string;
  isError: boolean;
}

export interface StageBrain {
  reply(request: RecordedRequest): AnthropicReply;
  /** Requests the script had no answer for. */
  readonly unexpected: string[];
  /** Every tool result sent back to the model, each once, in order. */
  readonly toolResults: SeenToolResult[];
  /** Steps never started. */
  unplayed(): string[];
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

export function createStageBrain(steps: readonly StageStep[]): StageBrain {
  const unexpected: string[] = [];
  const toolResults: SeenToolResult[] = [];
  const seen = new Set<string>();
  let next = 0;
  let current: StageStep | undefined;
  const text = (say: string): AnthropicReply => ({ kind: 'message', content: [{ type: 'text', text: say }] });

  const reply = (request: RecordedRequest): AnthropicReply => {
    const parsed = bodySchema.safeParse(request.body);
    if (!parsed.success) {
      unexpected.push('unreadable request body');
      return text('?');
    }
    const { system, messages } = parsed.data;
    const stage = /^\s*Stage: (\w+)/.exec(system === undefined ? '' : textOf(system))?.[1] ?? '?';
    const names = new Map<string, string>();
    for (const message of messages)
      for (const block of blocksOf(message.content)) {
        if (block.type === 'tool_use' && block.id) names.set(block.id, block.name ?? '?');
        if (block.type === 'tool_result' && block.tool_use_id && !seen.has(block.tool_use_id)) {
          seen.add(block.tool_use_id);
          toolResults.push({
            stage,
            tool: names.get(block.tool_use_id) ?? '?',
            output: textOf(block.content),
            isError: block.is_error === true,
          });
        }
      }
    const turn = messages.filter((message) => message.role === 'assistant').length;
    if (turn === 0) {
      current = steps[next];
      if (current?.stage !== stage) {
        unexpected.push(`step ${next}: asked for ${stage}, the script has ${current?.stage ?? 'nothing'}`);
        current = undefined;
        return text('Nothing scripted.');
      }
      next += 1;
    }
    if (current === undefined) return text('Nothing scripted.');
    const scripted = current.turns[turn];
    if (scripted) return { kind: 'message', content: toContent(scripted) };
    if (turn === current.turns.length && current.turns.at(-1)?.tools) return text(`Done with ${stage}.`);
    unexpected.push(`${stage}: turn ${turn} is past the script`);
    return text('Nothing more scripted.');
  };

  return {
    reply,
    unexpected,
    toolResults,
    unplayed: () => steps.slice(next).map((step) => step.stage),
  };
}
