/**
 * `ratchet bench polyglot`: the model is an attacker after the answers. While it works on an
 * exercise, its shell tries to read the exercise's official tests and example solution from the
 * benchmark checkout, and the results of the benchmark run (`--out`: other exercises' records and
 * repositories), and to plant a file in the checkout. Every attempt must find nothing, and the
 * benchmark checkout must be as it was. The same from a `--mode tdd` run's RED and GREEN stages.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { z } from 'zod';
import { E2E_API_KEY, E2E_MODEL, startScriptedModel } from '../support/e2e-run.js';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { createPolyglotBrain, POLYGLOT_FIXTURE, type PolyglotBrain } from '../support/polyglot-brain.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { bash, planSteps, say, write } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

/** The sandbox is what withholds the tests from the model's shell: this needs it for real. */
const tools = toolchain('bwrap', 'pytest');

/** Every file under `dir` with a hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path.slice(dir.length + 1)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return files;
}

describe.skipIf(tools.missing)(`bench polyglot: the model cannot reach the withheld tests${tools.note}`, () => {
  let dir: string;
  let benchmark: string;
  let out: string;
  let server: FakeAnthropicServer;
  let brain: PolyglotBrain;
  let result: CliResult;
  let before: Record<string, string>;

  beforeAll(async () => {
    // Outside any home and any temporary directory the sandbox hides by itself.
    dir = mkdtempSync(join(process.cwd(), '.tmp-bench-attack-'));
    benchmark = join(dir, 'polyglot-benchmark');
    cpSync(join(POLYGLOT_FIXTURE, 'python'), join(benchmark, 'python'), { recursive: true });
    out = join(dir, 'results');
    before = snapshot(benchmark);
    const leap = join(benchmark, 'python', 'exercises', 'practice', 'leap');
    const probe = [
      `cat ${join(leap, 'leap_test.py')}`,
      `cat ${join(leap, '.meta', 'example.py')}`,
      `ls -R ${out}`,
      `echo planted > ${join(leap, 'planted.txt')}`,
      'echo probe-done',
    ].join('; ');
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    brain = createPolyglotBrain({ probe });
    server.setFallback((request) => brain.reply(request));
    result = await runCli(
      [
        'bench',
        'polyglot',
        benchmark,
        '--provider',
        'anthropic',
        '--model',
        'claude-opus-4-5',
        '--tries',
        '1',
        '--out',
        out,
      ],
      {
        cwd: dir,
        env: {
          RATCHET_HOME: mkdtempSync(join(tmpdir(), 'ratchet-home-')),
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: E2E_API_KEY,
        },
        timeoutMs: 300_000,
      },
    );
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the shell neither the tests, nor the example solution, nor the results, and lets it change nothing', async () => {
    expect(result.exitCode, result.stderr).toBe(0);
    expect(brain.unexpected).toEqual([]);
    const seen = brain.toolResults.join('\n');
    expect(seen).toContain('probe-done');
    expect(seen).not.toContain('assertIs(');
    expect(seen).not.toContain('year % 400');
    // Of the results, at most the empty folders the sandbox mounts over: no record, no bench.json.
    expect(seen).not.toMatch(/\.json/);
    expect(seen).toMatch(/No such file or directory|Read-only file system|Permission denied/);
    // The checkout is as it was: nothing planted, nothing changed.
    expect(snapshot(benchmark)).toEqual(before);
    // The exercise was still solved and graded (the attack is harmless, the run goes on).
    const records = await readRecords(out);
    expect(records.map((record) => [record.exercise, record.passedAtTry])).toEqual([['leap', 1]]);
  });
});

/** Leap's first try as an attacker writes it: when the tests import it, it copies them where a next try could look. */
const STASHING_LEAP = `import os
import shutil

_here = os.path.dirname(os.path.abspath(__file__))
for _dest in ("/tmp/stash.py", os.path.join(_here, ".ratchet", "stash.py")):
    try:
        os.makedirs(os.path.dirname(_dest), exist_ok=True)
        shutil.copy(os.path.join(_here, "leap_test.py"), _dest)
    except OSError:
        pass


def leap_year(year):
    return year % 4 == 0
`;

describe.skipIf(tools.missing)(`bench polyglot: a try cannot hand the tests to the next${tools.note}`, () => {
  it('gives the second try none of what the code under test copied while the tests ran', async () => {
    const dir = mkdtempSync(join(process.cwd(), '.tmp-bench-stash-'));
    const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    try {
      const benchmark = join(dir, 'polyglot-benchmark');
      cpSync(join(POLYGLOT_FIXTURE, 'python'), join(benchmark, 'python'), { recursive: true });
      const before = snapshot(benchmark);
      const brain = createPolyglotBrain({
        wrongFirst: { leap: { 'leap.py': STASHING_LEAP } },
        probe: 'cat /tmp/stash.py .ratchet/stash.py; echo probe-done',
      });
      server.setFallback((request) => brain.reply(request));
      const out = join(dir, 'results');
      const result = await runCli(
        [
          'bench',
          'polyglot',
          benchmark,
          '--provider',
          'anthropic',
          '--model',
          'claude-opus-4-5',
          '--tries',
          '2',
          '--out',
          out,
        ],
        {
          cwd: dir,
          env: { RATCHET_HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: E2E_API_KEY },
          timeoutMs: 300_000,
        },
      );
      expect(result.exitCode, result.stderr).toBe(0);
      expect(brain.unexpected).toEqual([]);
      // Both tries looked (the probe ran twice) and found nothing of the tests.
      expect(brain.toolResults.filter((output) => output.includes('probe-done'))).toHaveLength(2);
      expect(brain.toolResults.join('\n')).not.toContain('assertIs(');
      const records = await readRecords(out);
      expect(records.map((record) => [record.exercise, record.passedAtTry])).toEqual([['leap', 2]]);
      expect(snapshot(benchmark)).toEqual(before);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

const TDD_ITEM = 'leap_year follows the Gregorian rule';
const TDD_LEAP = 'def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n';

describe.skipIf(tools.missing)(
  `bench polyglot --mode tdd: the model cannot reach the withheld tests${tools.note}`,
  () => {
    it('shows a tdd run’s shell neither the tests, nor the example solution, nor the results, and lets it change nothing', async () => {
      // Outside any home and any temporary directory the sandbox hides by itself.
      const dir = mkdtempSync(join(process.cwd(), '.tmp-bench-tdd-attack-'));
      const benchmark = join(dir, 'polyglot-benchmark');
      cpSync(join(POLYGLOT_FIXTURE, 'python'), join(benchmark, 'python'), { recursive: true });
      const out = join(dir, 'results');
      const before = snapshot(benchmark);
      const leap = join(benchmark, 'python', 'exercises', 'practice', 'leap');
      const probe = [
        `cat ${join(leap, 'leap_test.py')}`,
        `cat ${join(leap, '.meta', 'example.py')}`,
        `ls -R ${out}`,
        `echo planted > ${join(leap, 'planted.txt')}`,
        'echo probe-done',
      ].join('; ');
      const model = await startScriptedModel({
        items: [TDD_ITEM],
        steps: [
          ...planSteps('leap', [{ text: TDD_ITEM, testFile: 'test_leap_rules.py', implFile: 'leap.py' }]),
          // RED and GREEN each go after the answers first.
          {
            stage: 'RED',
            test: TDD_ITEM,
            turns: [
              say('The answers first.', bash(probe)),
              say(
                'A test.',
                write(
                  'test_leap_rules.py',
                  'from leap import leap_year\n\n\ndef test_2000():\n    assert leap_year(2000) is True\n',
                ),
              ),
            ],
          },
          {
            stage: 'GREEN',
            test: TDD_ITEM,
            turns: [say('Again.', bash(probe)), say('The rule.', write('leap.py', TDD_LEAP))],
          },
          { stage: 'REFACTOR', test: TDD_ITEM, turns: [say('Nothing to tidy.')] },
        ],
      });
      try {
        const result = await runCli(
          [
            'bench',
            'polyglot',
            benchmark,
            '--mode',
            'tdd',
            '--provider',
            'anthropic',
            '--model',
            E2E_MODEL,
            '--tries',
            '1',
            '--out',
            out,
          ],
          {
            cwd: dir,
            env: {
              RATCHET_HOME: join(dir, 'home'),
              ANTHROPIC_BASE_URL: model.server.url,
              ANTHROPIC_API_KEY: E2E_API_KEY,
            },
            timeoutMs: 300_000,
          },
        );
        expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(model.brain.unexpected).toEqual([]);
        expect(model.brain.unplayed()).toEqual([]);
        const seen = toolResults(model.server.requests);
        expect(seen.filter((output) => output.includes('probe-done'))).toHaveLength(2);
        expect(seen.join('\n')).not.toContain('assertIs(');
        expect(seen.join('\n')).not.toContain('year % 400');
        expect(seen.join('\n')).not.toMatch(/\.json/);
        expect(snapshot(benchmark)).toEqual(before);
        // The attack is harmless: the exercise was still solved and graded.
        const records = await readRecords(out);
        expect(records.map((record) => [record.exercise, record.mode, record.passedAtTry])).toEqual([
          ['leap', 'tdd', 1],
        ]);
      } finally {
        await model.server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);
  },
);

const MessagesSchema = z.object({
  messages: z.array(
    z.object({
      content: z.union([
        z.string(),
        z.array(z.object({ type: z.string(), tool_use_id: z.string().optional(), content: z.unknown().optional() })),
      ]),
    }),
  ),
});

/** The text of every tool result the model was sent (what its tools showed it), each once. */
function toolResults(requests: readonly RecordedRequest[]): string[] {
  // By the call they answer: a later request repeats the earlier results, and two calls may print the same.
  const results = new Map<string, string>();
  for (const request of requests) {
    for (const message of MessagesSchema.safeParse(request.body).data?.messages ?? []) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content)
        if (block.type === 'tool_result') results.set(block.tool_use_id ?? '', JSON.stringify(block.content));
    }
  }
  return [...results.values()];
}
