/**
 * A small JavaScript project with a real bug (`total` starts its sum at 1, and its test fails)
 * and a missing function (`median`), and the scripted brain that solves it through the solve
 * passes: META_PLAN one part, PART_PLAN two steps, IMPLEMENT s1 first with a SEARCH that does not
 * match (retried with that failure), then right; ADJUSTMENT after each step; s2 adds `median` and
 * its test (a new file). The brain reads only what a model would: the stage line of the system
 * prompt and the user message. Adapters answer in the Anthropic and OpenAI wire formats.
 */
import type { AnthropicReply, RecordedRequest } from './fake-anthropic-server.js';
import type { OpenAiReply } from './fake-openai-server.js';

export const STATS_JS = `export function total(xs) {
  return xs.reduce((sum, x) => sum + x, 1);
}

export function mean(xs) {
  return total(xs) / xs.length;
}
`;

export const SOLVE_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'stats', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/stats.js': STATS_JS,
  'src/report.js': `import { mean, total } from './stats.js';

export function report(xs) {
  return \`total \${total(xs)}, mean \${mean(xs)}\`;
}
`,
  'test/stats.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { total, mean } from '../src/stats.js';

test('total adds the numbers', () => assert.equal(total([1, 2, 3]), 6));
test('mean divides the total', () => assert.equal(mean([2, 4]), 3));
`,
};

export const SOLVE_TASK = 'fix total() in src/stats.js, which adds one too many, and add median()';

export const META_PLAN = {
  taskSummary: 'Fix total and add median',
  parts: [
    {
      id: 'p1',
      description: 'Fix the starting value of total and add a median function to src/stats.js',
      affectedFiles: ['src/stats.js'],
      dependsOn: [],
    },
  ],
  rationale: 'Both changes are in one small module.',
};

const STEPS = [
  {
    id: 's1',
    description: 'Fix total so that the sum starts at 0',
    targetFiles: ['src/stats.js'],
    targetSymbols: ['total'],
    dependsOn: [],
  },
  {
    id: 's2',
    description: 'Add median(xs) to src/stats.js with a test',
    targetFiles: ['src/stats.js', 'test/median.test.js'],
    targetSymbols: ['median'],
    dependsOn: ['s1'],
  },
];

/** s1's first answer: the SEARCH quotes the line with other spacing, so it matches nowhere. */
export const WRONG_FIX = `<edit file="src/stats.js">
<search>
return xs.reduce((sum,x) => sum + x, 1);
</search>
<replacement>
return xs.reduce((sum, x) => sum + x, 0);
</replacement>
</edit>`;

const RIGHT_FIX = `<edit file="src/stats.js">
<search>
  return xs.reduce((sum, x) => sum + x, 1);
</search>
<replacement>
  return xs.reduce((sum, x) => sum + x, 0);
</replacement>
</edit>`;

const ADD_MEDIAN = `<edit file="src/stats.js">
<search>
export function mean(xs) {
</search>
<replacement>
export function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function mean(xs) {
</replacement>
</edit>
<edit file="test/median.test.js">
<search>
</search>
<replacement>
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median } from '../src/stats.js';

test('median of an odd count', () => assert.equal(median([3, 1, 2]), 2));
test('median of an even count', () => assert.equal(median([4, 1, 3, 2]), 2.5));
</replacement>
</edit>`;

/** What the brain answers a solve prompt with: by the stage line, then by what the user message says. */
export function solveAnswer(system: string, user: string): string {
  const stage = system.split('\n')[0]?.trim() ?? '';
  switch (stage) {
    case 'Stage: META_PLAN':
      return `Here is the plan:\n\`\`\`json\n${JSON.stringify(META_PLAN, null, 2)}\n\`\`\``;
    case 'Stage: PRECISION':
      return JSON.stringify({
        grades: [
          { path: 'src/stats.js', relevance: 3 },
          { path: 'src/report.js', relevance: 1 },
        ],
      });
    case 'Stage: PART_PLAN':
      // snake_case keys and a trailing comma: repaired, as small models write them.
      return `{"part_id": "p1", "task_summary": "Fix total, then add median", "steps": ${JSON.stringify(STEPS)}, "rationale": "small steps",}`;
    case 'Stage: IMPLEMENT': {
      if (user.includes('Step to implement:\ns1')) return user.includes('Attempt 1:') ? RIGHT_FIX : WRONG_FIX;
      // `solve --plan`: the one step of the whole plan.
      if (user.includes('Step to implement:\nplan:')) return `${RIGHT_FIX}\n${ADD_MEDIAN}`;
      return ADD_MEDIAN;
    }
    case 'Stage: ADJUSTMENT': {
      const remaining = user.includes('"id": "s2"') ? [STEPS[1]] : [];
      return JSON.stringify({ revisedSteps: remaining, rationale: 'The plan still fits.', changesMade: [] });
    }
    default:
      return 'I do not know this stage.';
  }
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return (value as unknown[])
    .map((block) => (typeof block === 'object' && block !== null && 'text' in block ? String(block.text) : ''))
    .join('\n');
}

interface WireMessage {
  role: string;
  content: unknown;
}

/** The system prompt and user message of an Anthropic Messages request. */
export function anthropicPrompt(request: RecordedRequest): { system: string; user: string } {
  const body = request.body as { system?: unknown; messages?: WireMessage[] };
  return {
    system: text(body.system),
    user: text((body.messages ?? []).find((message) => message.role === 'user')?.content),
  };
}

/** The system prompt and user message of an OpenAI Chat Completions request. */
export function openAiPrompt(request: RecordedRequest): { system: string; user: string } {
  const messages = (request.body as { messages?: WireMessage[] }).messages ?? [];
  return {
    system: text(messages.find((message) => message.role === 'system' || message.role === 'developer')?.content),
    user: text(messages.find((message) => message.role === 'user')?.content),
  };
}

export function anthropicSolveBrain(request: RecordedRequest): AnthropicReply {
  const { system, user } = anthropicPrompt(request);
  return { kind: 'message', content: [{ type: 'text', text: solveAnswer(system, user) }] };
}

export function openAiSolveBrain(request: RecordedRequest): OpenAiReply {
  const { system, user } = openAiPrompt(request);
  return { kind: 'message', text: solveAnswer(system, user) };
}
