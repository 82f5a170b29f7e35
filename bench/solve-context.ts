import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { estimatePromptTokens } from '../src/context/token-estimate.js';
import { startFakeAnthropicServer } from '../test/support/fake-anthropic-server.js';
import { parseNdjson, runCli, type JsonLine } from '../test/support/run-cli.js';
import { anthropicPrompt, anthropicSolveBrain, SOLVE_FILES, SOLVE_TASK } from '../test/support/solve-fixture.js';
import { createTempRepo } from '../test/support/temp-repo.js';
import { table, type Bench, type BenchOptions, type BenchSummary } from './harness.js';

/** A string field of an NDJSON line ('' when absent or not a string). */
function stringField(line: JsonLine | undefined, key: string): string {
  const value = line?.[key];
  return typeof value === 'string' ? value : '';
}

/**
 * Retrieval bench (issue 15): prompt tokens per `ratchet solve` with the context pack (seed 004:
 * scope + precision, the most relevant files whole, signatures for the rest) against whole-file
 * prompting (`[solve] context = "whole-files"`: every scope candidate whole, no precision call),
 * on the same fixture repository, with the same scripted model, through the built CLI and the
 * loopback Anthropic server. Target: the pack's prompt tokens per solve <= 0.5x whole-file's,
 * with the same outcome (both runs complete, the same final tree).
 *
 * The fixture is the e2e one (`test/support/solve-fixture.ts`: a bug in `total`, `median`
 * missing) grown to a realistic neighbourhood: `WIDGETS` modules that import `src/stats.js`, each
 * with a test, so the import graph gives the scope stage many candidates. Prompt tokens are
 * counted from every request the server received (precision calls included), with the estimate
 * the budgets use (`estimatePromptTokens`); the token counts are deterministic, so `--runs` only
 * repeats the check.
 */

const WIDGETS = 12;

function widget(index: number): string {
  const name = `widget${index}`;
  const helpers = Array.from(
    { length: 6 },
    (_, helper) => `
/** Scales the values of ${name} by ${helper + 2} before summing them (report column ${helper}). */
export function ${name}Column${helper}(rows) {
  const scaled = rows.map((row) => row.values.map((value) => value * ${helper + 2}));
  const totals = scaled.map((values) => total(values));
  const average = totals.length === 0 ? 0 : mean(totals);
  return { label: '${name}-${helper}', totals, average, widest: Math.max(0, ...totals) };
}`,
  ).join('\n');
  return `import { mean, total } from '../stats.js';
${helpers}
`;
}

function widgetTest(index: number): string {
  return `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { widget${index}Column0 } from '../src/widgets/widget${index}.js';

test('widget${index} labels its column', () => assert.equal(widget${index}Column0([]).label, 'widget${index}-0'));
`;
}

function contextBenchFiles(): Record<string, string> {
  const files: Record<string, string> = { ...SOLVE_FILES };
  for (let index = 1; index <= WIDGETS; index++) {
    files[`src/widgets/widget${index}.js`] = widget(index);
    files[`test/widget${index}.test.js`] = widgetTest(index);
  }
  return files;
}

interface SideResult {
  promptTokens: number;
  calls: number;
  status: string;
  tree: string;
}

async function solveOnce(context: 'pack' | 'whole-files'): Promise<SideResult> {
  const server = await startFakeAnthropicServer();
  server.setFallback(anthropicSolveBrain);
  const repo = await createTempRepo({ files: contextBenchFiles() });
  try {
    await mkdir(join(repo.dir, '.ratchet'), { recursive: true });
    await writeFile(join(repo.dir, '.ratchet', 'config.toml'), `[solve]\ncontext = "${context}"\n`);
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-bench-solve-context-0000',
      RATCHET_HOME: repo.path('ratchet-home'),
    };
    const result = await runCli(
      ['solve', SOLVE_TASK, '--provider', 'anthropic', '--model', 'claude-sonnet-4-5', '--json'],
      {
        cwd: repo.dir,
        env,
        timeoutMs: 300_000,
      },
    );
    const events = parseNdjson(result.stdout);
    const status = stringField(events.filter((event) => event.type === 'solve-progress').at(-1), 'status');
    const runId = stringField(
      events.find((event) => event.type === 'run-start'),
      'runId',
    );
    if (result.exitCode !== 0 || runId === '') {
      throw new Error(`ratchet solve (${context}) exited ${result.exitCode}:\n${result.stderr.slice(-2000)}`);
    }
    const tree = execFileSync('git', ['rev-parse', `ratchet/${runId}^{tree}`], {
      cwd: repo.dir,
      encoding: 'utf8',
    }).trim();
    const promptTokens = server.requests
      .map((request) => anthropicPrompt(request))
      .reduce((sum, prompt) => sum + estimatePromptTokens(prompt.system, prompt.user), 0);
    return { promptTokens, calls: server.requests.length, status, tree };
  } finally {
    await server.close();
    await repo.cleanup();
  }
}

export const solveContextBench: Bench = {
  name: 'solve-context',
  description: 'prompt tokens per ratchet solve: context pack vs whole-file prompting (target <= 0.5x, same outcome)',
  async run(options: BenchOptions): Promise<BenchSummary> {
    let pack: SideResult | undefined;
    let whole: SideResult | undefined;
    for (let run = 0; run < options.runs; run++) {
      pack = await solveOnce('pack');
      whole = await solveOnce('whole-files');
    }
    if (pack === undefined || whole === undefined) throw new Error('no run');
    const ratio = pack.promptTokens / whole.promptTokens;
    const sameOutcome = pack.status === whole.status && pack.tree === whole.tree;
    console.log(
      table(
        ['side', 'prompt tokens', 'model calls', 'status', 'final tree'],
        [
          ['context pack', String(pack.promptTokens), String(pack.calls), pack.status, pack.tree.slice(0, 12)],
          ['whole files', String(whole.promptTokens), String(whole.calls), whole.status, whole.tree.slice(0, 12)],
        ],
      ),
    );
    console.log(`  ratio ${ratio.toFixed(2)}x (target <= 0.5x); same outcome: ${sameOutcome ? 'yes' : 'NO'}`);
    return {
      name: 'solve-context',
      headline: `pack ${pack.promptTokens} vs whole files ${whole.promptTokens} prompt tokens per solve: ${ratio.toFixed(2)}x; same outcome ${sameOutcome ? 'yes' : 'no'}`,
      targetsMet: ratio <= 0.5 && sameOutcome && pack.status === 'complete',
    };
  },
};
