/**
 * A small JavaScript project for `ratchet refactor run` end-to-end tests on an API provider, and
 * the brain the loopback fake Anthropic server answers it with: the patcher removes the dead
 * `unusedHelper` in batch-001 and answers `noop` for every other batch; every other role gets a
 * plain text answer (the heuristic plan stays as it is).
 */
import type { AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';

export const REFACTOR_MATH = `export function add(a, b) {
  return a + b;
}

function unusedHelper(x) {
  return x * 2;
}

export function mul(a, b) {
  let result = 0;
  for (let i = 0; i < b; i++) result = add(result, a);
  return result;
}
`;

export const REFACTOR_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'rf', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/math.js': REFACTOR_MATH,
  'src/app.js': `import { add, mul } from './math.js';

export function total(xs) {
  return xs.reduce((sum, x) => add(sum, mul(x, 1)), 0);
}
`,
  'test/app.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { total } from '../src/app.js';

test('total', () => assert.equal(total([1, 2, 3]), 6));
`,
};

/** The patch batch-001 answers with: it removes `unusedHelper` from `src/math.js`. */
export const REMOVE_DEAD_CODE = `diff --git a/src/math.js b/src/math.js
--- a/src/math.js
+++ b/src/math.js
@@ -2,10 +2,6 @@ export function add(a, b) {
   return a + b;
 }
 
-function unusedHelper(x) {
-  return x * 2;
-}
-
 export function mul(a, b) {
   let result = 0;
   for (let i = 0; i < b; i++) result = add(result, a);
`;

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return (value as unknown[])
    .map((block) => (typeof block === 'object' && block !== null && 'text' in block ? String(block.text) : ''))
    .join('\n');
}

/** The first line of the system prompt, e.g. `Stage: PATCHER`; '' for a request without one (the model list). */
export function stageOf(request: RecordedRequest): string {
  return text((request.body as { system?: unknown } | undefined)?.system).split('\n')[0] ?? '';
}

/** The fallback answer of the fake server for a refactor run. */
export function refactorBrain(request: RecordedRequest): AnthropicReply {
  if (stageOf(request) !== 'Stage: PATCHER')
    return { kind: 'message', content: [{ type: 'text', text: 'The heuristic plan is fine.' }] };
  const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const prompt = text(messages.find((message) => message.role === 'user')?.content);
  const patch = prompt.includes('# Batch batch-001')
    ? {
        status: 'ok',
        rationale: 'unusedHelper is never called.',
        risk_notes: [],
        patch_unified_diff: REMOVE_DEAD_CODE,
        touched_files: ['src/math.js'],
        expected_verifier: ['npm test'],
      }
    : {
        status: 'noop',
        rationale: 'Nothing worth changing safely.',
        risk_notes: [],
        patch_unified_diff: '',
        touched_files: [],
        expected_verifier: [],
      };
  return { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: patch }] };
}

/**
 * The brain of a run with one planned batch: the planner plans `batch-001` (`goal` over `scope`),
 * the patcher answers with `diff` to `files`; every other role gets a plain text answer.
 */
export function oneBatchBrain(
  batch: { goal: string; scope: string[]; budget: number },
  patch: { diff: string; files: string[]; rationale: string },
): (request: RecordedRequest) => AnthropicReply {
  return (request) => {
    const stage = stageOf(request);
    const answer =
      stage === 'Stage: PLANNER'
        ? {
            batches: [
              {
                id: 'batch-001',
                goal: batch.goal,
                scope_globs: batch.scope,
                allowed_operations: ['edit'],
                diff_budget_loc: batch.budget,
                risk_score: 10,
                verifier_level: 'fast',
              },
            ],
          }
        : stage === 'Stage: PATCHER'
          ? {
              status: 'ok',
              rationale: patch.rationale,
              risk_notes: [],
              patch_unified_diff: patch.diff,
              touched_files: patch.files,
              expected_verifier: ['npm test'],
            }
          : undefined;
    return answer === undefined
      ? { kind: 'message', content: [{ type: 'text', text: 'ok' }] }
      : { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: answer }] };
  };
}
