/**
 * The scripted model behind the fake Anthropic server for end-to-end runs of `ratchet refactor
 * run --provider claude-code`: the REAL `claude` binary sends its requests here, and the brain
 * answers them the way a model would, from a per-batch script.
 *
 * - The role comes from the `Stage: X` line of our system prompt, which the CLI sends as the last
 *   text block of `system` (PLANNER, PATCHER, CRITIC). Requests without one (the CLI's own
 *   authentication query, "Respond with OK") get a short text.
 * - The batch comes from `# Batch batch-NNN` in the user message (the context packet).
 * - The attempt comes from the feedback the packet carries: none -> the first answer; "rejected
 *   by the admission checks" or "verifier failed" (or any other feedback) -> the retry answer.
 * - Answers go through the CLI's `StructuredOutput` client tool (`--json-schema`), whose valid
 *   input ends the CLI's run with `structured_output`. The planner may instead answer in plain
 *   text, which leaves Ratchet with the heuristic plan.
 *
 * Everything the script does not cover is answered harmlessly and recorded in `unexpected`.
 */
import { z } from 'zod';
import type { AnthropicContentBlock, AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

/** Seed 002's PatchResponse (15.2). */
export interface PatchAnswer {
  status: 'ok' | 'noop' | 'blocked';
  rationale: string;
  risk_notes: string[];
  patch_unified_diff: string;
  touched_files: string[];
  expected_verifier: string[];
  followups?: string[];
}

/** Seed 002's PlannedBatch (15.1). */
export interface PlannerBatch {
  id: string;
  goal: string;
  scope_globs: string[];
  allowed_operations: string[];
  diff_budget_loc: number;
  risk_score: number;
  verifier_level: 'fast' | 'full';
  notes?: string;
}

export type PlannerAnswer = { kind: 'structured'; batches: PlannerBatch[] } | { kind: 'text'; text: string };

export interface BatchScript {
  /** The goal the plan gives this batch (checked against the packet, so a changed plan is caught). */
  goal: string;
  first: PatchAnswer;
  /** The answer to a retry (a packet with feedback on the previous attempt). */
  retry?: PatchAnswer;
}

export interface RefactorBrainScript {
  planner: PlannerAnswer;
  batches: Record<string, BatchScript>;
}

export type Feedback = 'admission' | 'verifier' | 'other';

/** How the brain understood one request. */
export interface RefactorBrainCall {
  role: string;
  batch: string | null;
  attempt: 'first' | 'retry' | null;
  feedback: Feedback | null;
  /** The first user message, as the model saw it. */
  prompt: string;
}

export interface RefactorBrain {
  reply(request: RecordedRequest): AnthropicReply;
  readonly calls: RefactorBrainCall[];
  readonly unexpected: string[];
  /** Calls of one role (PLANNER, PATCHER, CRITIC, or `none` for requests without a stage). */
  callsOf(role: string): RefactorBrainCall[];
}

const bodySchema = z.looseObject({
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]).optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown() })),
});

const blockSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  const blocks = z.array(blockSchema).safeParse(content);
  if (!blocks.success) return '';
  return blocks.data
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

/** A PatchResponse that changes nothing. */
export function noopAnswer(rationale: string): PatchAnswer {
  return {
    status: 'noop',
    rationale,
    risk_notes: [],
    patch_unified_diff: '',
    touched_files: [],
    expected_verifier: [],
  };
}

/** A PatchResponse carrying `diff`, which touches `files`. */
export function patchAnswer(diff: string, files: string[], rationale: string): PatchAnswer {
  return {
    status: 'ok',
    rationale,
    risk_notes: ['behaviour preserved; covered by the unit tests'],
    patch_unified_diff: diff,
    touched_files: files,
    expected_verifier: ['fast'],
  };
}

function structured(input: unknown, say: string): AnthropicReply {
  const content: AnthropicContentBlock[] = [
    { type: 'text', text: say },
    { type: 'tool_use', name: 'StructuredOutput', input },
  ];
  return { kind: 'message', content };
}

function text(say: string): AnthropicReply {
  return { kind: 'message', content: [{ type: 'text', text: say }] };
}

export function createRefactorBrain(script: RefactorBrainScript): RefactorBrain {
  const calls: RefactorBrainCall[] = [];
  const unexpected: string[] = [];

  const understand = (request: RecordedRequest): RefactorBrainCall | string => {
    const body = bodySchema.safeParse(request.body);
    if (!body.success) return `a request body that is not a Messages request: ${body.error.issues[0]?.message ?? ''}`;
    const system =
      typeof body.data.system === 'string'
        ? body.data.system
        : (body.data.system ?? []).map((block) => block.text ?? '').join('\n');
    const role = /^Stage: ([A-Z_]+)\s*$/m.exec(system)?.[1] ?? 'none';
    const first = body.data.messages.find((message) => message.role === 'user');
    const prompt = first ? textOf(first.content) : '';
    const batch = /^# Batch (batch-\d{3})\b/m.exec(prompt)?.[1] ?? null;
    const hasFeedback = prompt.includes('## Feedback on your previous attempt');
    const feedback: Feedback | null = !hasFeedback
      ? null
      : prompt.includes('rejected by the admission checks')
        ? 'admission'
        : prompt.includes('verifier failed')
          ? 'verifier'
          : 'other';
    return { role, batch, attempt: role === 'PATCHER' ? (hasFeedback ? 'retry' : 'first') : null, feedback, prompt };
  };

  const reply = (request: RecordedRequest): AnthropicReply => {
    const call = understand(request);
    if (typeof call === 'string') {
      unexpected.push(call);
      return text('I cannot help with that.');
    }
    calls.push(call);
    if (call.role === 'none') return text('OK');
    if (call.role === 'PLANNER') {
      if (script.planner.kind === 'text') return text(script.planner.text);
      return structured({ batches: script.planner.batches }, 'Here is the refined plan.');
    }
    if (call.role === 'PATCHER') {
      const entry = call.batch ? script.batches[call.batch] : undefined;
      if (!entry || !call.batch) {
        unexpected.push(`PATCHER for an unscripted batch ${call.batch ?? '(none)'}: ${call.prompt.slice(0, 200)}`);
        return structured(noopAnswer('Not scripted.'), 'Nothing to do.');
      }
      if (!call.prompt.includes(`# Batch ${call.batch}: ${entry.goal}`)) {
        unexpected.push(
          `${call.batch} arrived with another goal than "${entry.goal}": ${call.prompt.split('\n')[0] ?? ''}`,
        );
      }
      const answer = call.attempt === 'retry' ? entry.retry : entry.first;
      if (!answer) {
        unexpected.push(
          `PATCHER ${call.batch}: no ${call.attempt ?? ''} answer scripted (feedback ${call.feedback ?? 'none'})`,
        );
        return structured({ ...noopAnswer('Not scripted.'), status: 'blocked' }, 'Blocked.');
      }
      return structured(answer, `Patch for ${call.batch}.`);
    }
    unexpected.push(`a ${call.role} request, which this script does not cover`);
    return structured({ decision: 'accept', reasons: ['not scripted'] }, 'Accepting.');
  };

  return {
    reply,
    calls,
    unexpected,
    callsOf: (role) => calls.filter((call) => call.role === role),
  };
}
