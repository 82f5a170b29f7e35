/**
 * A scripted team for `ratchet team` end-to-end tests: the fallback of the fake Anthropic server.
 * Each speaker has its own queue of replies, so parallel rounds (whose requests arrive in any
 * order) stay deterministic. The speaker comes from the system prompt: its first line
 * (`Stage: AGENT`, `Stage: COACH`, `Stage: EXTRACT_TASKS`, ...) and, for agents and the coach,
 * its `You are <name>,` line; extraction steps are keyed by their stage. Every request a speaker
 * gets is kept (`seen`) so tests can check what it was shown. A request no reply is left for is
 * answered with a harmless text and recorded in `unexpected`.
 */
import { bodySchema, textOf } from './anthropic-request.js';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

export interface TeamReply {
  say?: string;
  tools?: Array<{ name: string; input: unknown }>;
}

export interface TeamBrain {
  reply(request: RecordedRequest): AnthropicReply;
  /** Adds replies to a speaker's queue (an agent or coach name, or `EXTRACT_TASKS`, ...). */
  script(speaker: string, ...replies: TeamReply[]): void;
  /** Every request's system prompt and messages as text, by speaker. */
  readonly seen: Map<string, string[]>;
  readonly unexpected: string[];
  /** Speakers with replies never asked for. */
  unplayed(): string[];
}

export function createTeamBrain(): TeamBrain {
  const queues = new Map<string, TeamReply[]>();
  const seen = new Map<string, string[]>();
  const unexpected: string[] = [];
  return {
    seen,
    unexpected,
    script(speaker, ...replies) {
      queues.set(speaker, [...(queues.get(speaker) ?? []), ...replies]);
    },
    unplayed() {
      return [...queues].filter(([, replies]) => replies.length > 0).map(([speaker]) => speaker);
    },
    reply(request) {
      const body = bodySchema.parse(request.body);
      const system = textOf(body.system ?? '');
      const stage = /^\s*Stage: (\w+)/.exec(system)?.[1] ?? '?';
      const name = /You are ([\w-]+),/.exec(system)?.[1];
      const speaker = stage === 'AGENT' || stage === 'COACH' ? (name ?? '?') : stage;
      seen.set(speaker, [
        ...(seen.get(speaker) ?? []),
        `${system}\n${body.messages.map((m) => textOf(m.content)).join('\n')}`,
      ]);
      const next = queues.get(speaker)?.shift();
      if (next === undefined) {
        unexpected.push(`${speaker} (${stage})`);
        return { kind: 'message', content: [{ type: 'text', text: 'nothing scripted' }] };
      }
      const content: AnthropicContentBlock[] = [
        ...(next.say === undefined ? [] : [{ type: 'text' as const, text: next.say }]),
        ...(next.tools ?? []).map((tool): AnthropicContentBlock => ({
          type: 'tool_use',
          name: tool.name,
          input: tool.input,
        })),
      ];
      return { kind: 'message', content: content.length === 0 ? [{ type: 'text', text: '' }] : content };
    },
  };
}
