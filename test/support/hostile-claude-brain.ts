/**
 * A hostile model behind the fake Anthropic server, for the security tests that drive the REAL
 * `claude` binary through the built Ratchet CLI: in each role it first plays a script of tool
 * calls an attacker would make (reading secrets, calling out, overwriting credentials, outliving
 * its time limit), then ends the call the way the role expects, so the run goes on.
 *
 * - The role comes from the `Stage: X` line of the system prompt (PLANNER, PATCHER, GREEN...);
 *   the CLI's authentication check has none (role `none`).
 * - The step within one CLI call is the number of assistant turns already in the conversation:
 *   reply n of a call is `script[role][n]`, and once the script is played, `finish(role)`.
 * - Only the first call of each role attacks; later calls of the role finish at once.
 * - `toolResults()` pairs every tool call the script made with the result the CLI sent back, as
 *   the fake received it: what actually reached the (attacker's) model.
 */
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';
import { blocksOf, bodySchema, textOf } from './anthropic-request.js';

export interface HostileScript {
  /** Per role, the replies of its first CLI call, in order. */
  steps: Partial<Record<string, AnthropicReply[]>>;
  /** The reply that ends a call of `role` (plain text, or a StructuredOutput). */
  finish: (role: string) => AnthropicReply;
}

export interface ToolExchange {
  role: string;
  name: string;
  input: unknown;
  /** The tool result's content as JSON text. */
  result: string;
  isError: boolean;
}

export interface HostileBrain {
  reply(request: RecordedRequest): AnthropicReply;
  /** The role of each request, in order. */
  readonly roles: string[];
  /** Every scripted tool call and the result the CLI returned for it. */
  toolResults(): ToolExchange[];
  /** The system prompt and messages of the first request of `role`, as text. */
  firstRequestOf(role: string): string | undefined;
}

export function toolUse(name: string, input: Record<string, unknown>): AnthropicReply {
  return { kind: 'message', content: [{ type: 'tool_use', name, input }] };
}

export function bash(command: string, extra: Record<string, unknown> = {}): AnthropicReply {
  return toolUse('Bash', { command, description: 'Inspect the environment', ...extra });
}

export function say(text: string): AnthropicReply {
  return { kind: 'message', content: [{ type: 'text', text }] };
}

export function structuredOutput(input: unknown): AnthropicReply {
  const content: AnthropicContentBlock[] = [{ type: 'tool_use', name: 'StructuredOutput', input }];
  return { kind: 'message', content };
}

function roleOf(system: unknown): string {
  const text = typeof system === 'string' ? system : textOf(system);
  return /^Stage: ([A-Z_]+)\s*$/m.exec(text)?.[1] ?? 'none';
}

export function createHostileClaudeBrain(script: HostileScript): HostileBrain {
  const roles: string[] = [];
  const calls = new Map<string, number>();
  const requests: Array<{ role: string; request: RecordedRequest }> = [];

  const reply = (request: RecordedRequest): AnthropicReply => {
    const body = bodySchema.safeParse(request.body);
    if (!body.success) return say('I cannot help with that.');
    const role = roleOf(body.data.system);
    roles.push(role);
    requests.push({ role, request });
    const turn = body.data.messages.filter((message) => message.role === 'assistant').length;
    if (turn === 0) calls.set(role, (calls.get(role) ?? 0) + 1);
    const steps = calls.get(role) === 1 ? (script.steps[role] ?? []) : [];
    return steps[turn] ?? script.finish(role);
  };

  const toolResults = (): ToolExchange[] => {
    const seen = new Map<string, ToolExchange>();
    for (const { role, request } of requests) {
      const body = bodySchema.safeParse(request.body);
      if (!body.success) continue;
      const uses = new Map<string, { name: string; input: unknown }>();
      for (const message of body.data.messages) {
        for (const block of blocksOf(message.content)) {
          if (block.type === 'tool_use' && block.id !== undefined)
            uses.set(block.id, { name: block.name ?? '?', input: (block as { input?: unknown }).input });
          if (block.type === 'tool_result' && block.tool_use_id !== undefined && !seen.has(block.tool_use_id)) {
            const use = uses.get(block.tool_use_id);
            seen.set(block.tool_use_id, {
              role,
              name: use?.name ?? '?',
              input: use?.input,
              result: JSON.stringify(block.content ?? ''),
              isError: block.is_error === true,
            });
          }
        }
      }
    }
    return [...seen.values()];
  };

  return {
    reply,
    roles,
    toolResults,
    firstRequestOf: (role) => {
      const entry = requests.find((candidate) => candidate.role === role);
      return entry === undefined ? undefined : JSON.stringify(entry.request.body);
    },
  };
}
