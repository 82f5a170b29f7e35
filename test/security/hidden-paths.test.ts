/**
 * `StartOptions.hidden`: the places a run's sandbox never shows, whatever the workflow (a
 * benchmark starts `tdd` and `solve` runs too, and hides its checkout and results from them).
 * A `ratchet tdd` run, started through the library as `ratchet bench polyglot --mode tdd` would,
 * meets a model that is an attacker after the answers: its shell reads the hidden folder's files,
 * lists it, and plants a file in it. Every attempt must find nothing, the folder must be as it
 * was, and the run must still finish its work (the attack is harmless). The hidden places are
 * kept with the run, so `resume` hides them too.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createIdGenerator, systemClock } from '../../src/engine/effects.js';
import { readRunConfig } from '../../src/engine/run-config.js';
import { createWorkflowRegistry } from '../../src/engine/registry.js';
import { ledgerPath } from '../../src/engine/run-paths.js';
import { startRun, type StartServices } from '../../src/engine/start-run.js';
import type { RunOutcome } from '../../src/engine/run-process.js';
import { openLedger } from '../../src/ledger/ledger.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { tddWorkflow } from '../../src/workflows/tdd/definition.js';
import {
  createProjectRepo,
  E2E_MODEL,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
} from '../support/e2e-run.js';
import type { RecordedRequest } from '../support/fake-anthropic-server.js';
import { planSteps, say, write, bash, type ScriptStep } from '../support/scripted-brain.js';
import { toolchain } from '../support/toolchains.js';

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

/** The sandbox is what hides the folder from the model's shell: this needs it for real. */
const tools = toolchain('bwrap', 'pytest');

const ITEM = 'leap_year is true for a year divisible by 400';
const ANSWER = 'ANSWER-year-divides-by-400';

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

/** The text of every tool result the model was sent (what its tools showed it). */
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

describe.skipIf(tools.missing)(`a run's hidden places, attacked from a tdd run${tools.note}`, () => {
  let secret = '';
  let repo: ProjectRepo;
  let model: ScriptedModel;
  let before: Record<string, string>;
  let outcome: RunOutcome;
  let runConfig: unknown;

  beforeAll(async () => {
    // Outside any home and any temporary directory the sandbox hides by itself: only `hidden` hides it.
    secret = mkdtempSync(join(process.cwd(), '.tmp-hidden-'));
    mkdirSync(join(secret, 'leap', '.meta'), { recursive: true });
    writeFileSync(join(secret, 'leap', 'leap_test.py'), `# ${ANSWER}\n`);
    writeFileSync(join(secret, 'leap', '.meta', 'example.py'), `# ${ANSWER}\n`);
    before = snapshot(secret);
    repo = await createProjectRepo({
      '.gitignore': '__pycache__/\n.pytest_cache/\n',
      'pytest.ini': '[pytest]\ntestpaths = tests\npythonpath = .\n',
      'leap.py': 'def leap_year(year):\n    pass\n',
      'tests/test_smoke.py': 'def test_smoke():\n    assert True\n',
    });
    const probe = [
      `cat ${join(secret, 'leap', 'leap_test.py')}`,
      `cat ${join(secret, 'leap', '.meta', 'example.py')}`,
      `ls -R ${secret}`,
      `echo planted > ${join(secret, 'leap', 'planted.txt')}`,
      'echo probe-done',
    ].join('; ');
    const steps: ScriptStep[] = [
      ...planSteps('leap', [{ text: ITEM, testFile: 'tests/test_leap.py', implFile: 'leap.py' }]),
      {
        stage: 'RED',
        test: ITEM,
        turns: [
          say('First, the answers.', bash(probe)),
          say(
            'A failing test.',
            write(
              'tests/test_leap.py',
              'from leap import leap_year\n\n\ndef test_divisible_by_400():\n    assert leap_year(2000) is True\n',
            ),
          ),
        ],
      },
      {
        stage: 'GREEN',
        test: ITEM,
        turns: [say('Make it pass.', write('leap.py', 'def leap_year(year):\n    return year % 400 == 0\n'))],
      },
      { stage: 'REFACTOR', test: ITEM, turns: [say('Nothing to tidy.')] },
    ];
    model = await startScriptedModel({ items: [ITEM], steps });
    const env = ratchetEnv(repo, model.server);
    const config = await loadConfig({
      repoRoot: repo.dir,
      env,
      flags: { provider: 'anthropic', model: E2E_MODEL },
    });
    const services: StartServices = {
      clock: systemClock,
      ids: createIdGenerator(systemClock),
      runner: createProcessRunner(),
      env,
      ledger: (root) => openLedger(ledgerPath(root)),
    };
    const run = startRun(
      tddWorkflow,
      { directory: repo.dir, request: { feature: 'leap years' }, config, allowDirty: false, hidden: [secret] },
      services,
    );
    let next = await run.next();
    while (!next.done) next = await run.next();
    outcome = next.value;
    const ledger = await openLedger(ledgerPath(repo.dir));
    try {
      const row = await ledger.getRun(outcome.runId);
      runConfig = row === undefined ? null : readRunConfig(createWorkflowRegistry([tddWorkflow]), row).hidden;
    } finally {
      await ledger.close();
    }
  }, 300_000);

  afterAll(async () => {
    await model?.server.close();
    await repo?.cleanup();
    if (secret) rmSync(secret, { recursive: true, force: true });
  });

  it('shows the shell nothing of the hidden folder, lets it change nothing there, and the run still finishes', () => {
    expect(model.brain.unexpected).toEqual([]);
    expect(outcome.status, outcome.error?.message).toBe('completed');
    const seen = toolResults(model.server.requests).join('\n');
    expect(seen).toContain('probe-done');
    expect(seen).not.toContain(ANSWER);
    // `ls -R` found the folder empty: it would have listed its subfolder as `<folder>/leap:`.
    expect(seen).not.toContain(`${join(secret, 'leap')}:`);
    expect(seen).toMatch(/No such file or directory|Read-only file system|Permission denied/);
    expect(snapshot(secret)).toEqual(before);
  });

  it('keeps the hidden places with the run, so a resumed run hides them too', () => {
    expect(runConfig).toEqual([secret]);
  });
});
