/**
 * End to end: the built CLI runs `ratchet tdd` on a node:test project through the REAL Anthropic
 * adapter, pointed at the loopback fake server whose scripted brain plays the model (see
 * test/support/tdd-script-javascript.ts for the script and the faults it injects). Then
 * `status`, `history`, `report`, `accept`, and in a second run `reject`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  checkpointsOf,
  createProjectRepo,
  E2E_API_KEY,
  E2E_MODEL,
  filesContaining,
  modelCallRequests,
  readLedger,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
} from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { createScriptedBrain } from '../support/scripted-brain.js';
import {
  comparedNote,
  cycleSubjects,
  expectPlayedAsScripted,
  noteBuilder,
  runTdd,
  stageLine,
  testListItems,
  type TddRun,
} from '../support/tdd-e2e-run.js';
import {
  JS_FEATURE,
  JS_FINAL_IMPL,
  JS_IMPL_FILE,
  JS_ITEMS,
  JS_PROJECT_FILES,
  JS_TEST_FILE,
  javascriptScript,
} from '../support/tdd-script-javascript.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const [SLUG, PUNCT, TRUNC] = JS_ITEMS;

/** The subject is the TDD loop and the commands around a run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`ratchet tdd on a node:test project (real Anthropic adapter, scripted model)${sandbox.note}`, () => {
  let repo: ProjectRepo;
  let model: ScriptedModel;
  let run: TddRun;
  const ratchet = (...args: string[]): Promise<CliResult> =>
    runCli(args, { cwd: repo.dir, env: ratchetEnv(repo, model.server) });

  beforeAll(async () => {
    assertFreshBuild();
    repo = await createProjectRepo(sandbox.files(JS_PROJECT_FILES));
    model = await startScriptedModel(javascriptScript(E2E_API_KEY));
    // The very first request of the run is answered "529 overloaded": the adapter retries it.
    model.server.enqueue({ kind: 'error', status: 529 });
    run = await runTdd(repo, [JS_FEATURE, ...ANTHROPIC_FLAGS], { env: ratchetEnv(repo, model.server) });
  }, 150_000);

  afterAll(async () => {
    // Undefined when beforeAll failed early.
    await (model as ScriptedModel | undefined)?.server.close();
    await (repo as ProjectRepo | undefined)?.cleanup();
  });

  it('completes with exit code 0, playing every scripted step and nothing else', () => {
    const { result, events } = run;
    expectPlayedAsScripted(model.brain, result);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'completed' });
    // No Write/Edit was refused; only what the script ran through Bash may have failed.
    expect(model.brain.toolErrors.filter((error) => error.tool !== 'Bash')).toEqual([]);
    // Every model call went to the configured model, with the key.
    for (const request of modelCallRequests(model.server)) {
      expect(request.headers['x-api-key']).toBe(E2E_API_KEY);
      expect(request.body).toMatchObject({ model: E2E_MODEL });
    }
  });

  it('commits every accepted stage in order on ratchet/<run-id>', () => {
    const { commits, ledger } = run;
    expect(commits.map((commit) => commit.subject)).toEqual([
      ...cycleSubjects(SLUG, true),
      ...cycleSubjects(PUNCT, false),
      ...cycleSubjects(TRUNC, false),
      'plan: all tests done',
    ]);
    // The checkpoints in the ledger are these commits.
    expect(ledger.checkpoints.map((row) => [row.commitSha, row.subject])).toEqual(
      commits.map((commit) => [commit.sha, commit.subject]),
    );
  });

  it('writes a handoff note with the seed fields on every commit', () => {
    const { runId, commits } = run;
    const note = noteBuilder(runId, JS_ITEMS, { testFile: JS_TEST_FILE, implFile: JS_IMPL_FILE });
    expect(commits.map((commit) => comparedNote(commit.note))).toEqual([
      note('PLAN', 'RED', 1, SLUG, [], null, 0),
      note('RED', 'GREEN', 1, SLUG, [], 'FAIL', 1), // RED_FIX was the second attempt
      note('GREEN', 'REFACTOR', 1, SLUG, [SLUG], 'PASS', 0),
      note('REFACTOR', 'PLAN', 1, SLUG, [SLUG], 'PASS', 0),
      note('PLAN', 'RED', 2, PUNCT, [SLUG], null, 0),
      note('RED', 'GREEN', 2, PUNCT, [SLUG], 'FAIL', 0),
      note('GREEN', 'REFACTOR', 2, PUNCT, [SLUG, PUNCT], 'PASS', 1), // the second GREEN passed
      note('REFACTOR', 'PLAN', 2, PUNCT, [SLUG, PUNCT], 'PASS', 1), // the first REFACTOR was rolled back
      note('PLAN', 'RED', 3, TRUNC, [SLUG, PUNCT], null, 0),
      note('RED', 'GREEN', 3, TRUNC, [SLUG, PUNCT], 'FAIL', 0),
      note('GREEN', 'REFACTOR', 3, TRUNC, [...JS_ITEMS], 'PASS', 0), // FIX is not a GREEN retry
      note('REFACTOR', 'PLAN', 3, TRUNC, [...JS_ITEMS], 'PASS', 0),
      note('PLAN', 'COMPLETE', 4, null, [...JS_ITEMS], null, 0),
    ]);
  });

  it('leaves every item of test-list.md checked and the code as the script wrote it', () => {
    const { runId } = run;
    const branch = `ratchet/${runId}`;
    expect(testListItems(repo, branch)).toEqual(JS_ITEMS.map((item) => `- [x] ${item}`));
    expect(`${repo.run('show', `${branch}:${JS_IMPL_FILE}`)}\n`).toBe(JS_FINAL_IMPL);
    // The broken refactoring of cycle 2 left no trace in the history.
    expect(repo.run('log', '-p', branch, '--', JS_IMPL_FILE)).not.toContain('toWords');
  });

  it("never touches the user's checkout", () => {
    const { before, runId } = run;
    expect(checkoutState(repo)).toEqual(before);
    expect(existsSync(join(repo.dir, JS_IMPL_FILE))).toBe(false);
    expect(existsSync(join(repo.home, 'worktrees', runId, JS_IMPL_FILE))).toBe(true);
  });

  it('records every stage attempt with its outcome and the gate reasons', () => {
    const { runId, ledger } = run;
    expect(ledger.stages.map(stageLine)).toEqual([
      '1 PLAN#1 accepted',
      '1 RED#1 rejected passed-immediately',
      '1 RED_FIX#2 accepted',
      '1 REVIEW_TESTS#2 accepted',
      '1 GREEN#1 accepted',
      '1 VERIFY#1 accepted',
      '1 REFACTOR#1 accepted',
      '1 RE_VERIFY#1 accepted',
      '2 PLAN#1 accepted',
      '2 RED#1 accepted',
      '2 REVIEW_TESTS#1 accepted',
      '2 GREEN#1 rejected tests-failing',
      '2 GREEN#2 accepted',
      '2 VERIFY#1 accepted',
      '2 REFACTOR#1 rejected tests-failing',
      '2 RE_VERIFY#1 rejected tests-failing',
      '2 REFACTOR#2 accepted no changes',
      '3 PLAN#1 accepted',
      '3 RED#1 accepted',
      '3 REVIEW_TESTS#1 accepted',
      '3 GREEN#1 accepted',
      '3 VERIFY#1 rejected lint-failed',
      // FIX counts its own attempts from 1, like RE_VERIFY that gates each of them.
      '3 FIX#1 accepted',
      '3 RE_VERIFY#1 accepted',
      '3 REFACTOR#1 accepted no changes',
      '4 PLAN#1 accepted',
    ]);
    expect(ledger.run).toMatchObject({
      id: runId,
      status: 'completed',
      provider: 'anthropic',
      model: E2E_MODEL,
      feature: JS_FEATURE,
      error: null,
    });
  });

  it('warns about the passed-immediately test and reports the refactor rollback', () => {
    const { events, commits } = run;
    expect(events.filter((event) => event.type === 'warning').map((event) => String(event.message))).toEqual(
      expect.arrayContaining([expect.stringContaining(`the new test for "${SLUG}" passed immediately`)]),
    );
    const rollbacks = events.filter((event) => event.type === 'checkpoint-rollback');
    const featPunct = commits.find((commit) => commit.subject === `feat: ${PUNCT}`);
    expect(rollbacks).toEqual([
      expect.objectContaining({ stage: 'REFACTOR', to: featPunct?.sha, reason: 'tests-failing' }),
    ]);
  });

  it('retries the 529 and the 429 (retry-after: 1) and records both failed calls', () => {
    const { events, ledger } = run;
    const retries = events.filter((event) => event.type === 'model-retry');
    expect(retries).toEqual([
      expect.objectContaining({
        provider: 'anthropic',
        model: E2E_MODEL,
        attempt: 1,
        delayMs: 1000,
        reason: expect.stringMatching(/^overloaded: .*529/) as unknown,
      }),
      expect.objectContaining({
        provider: 'anthropic',
        model: E2E_MODEL,
        attempt: 1,
        delayMs: 1000,
        reason: expect.stringMatching(/^rate-limit: .*429/) as unknown,
      }),
    ]);
    const failed = ledger.modelCalls.filter((call) => call.errorCode !== null);
    expect(failed.map((call) => [call.stage, call.errorCode, call.response])).toEqual([
      ['PLAN', 'overloaded', null],
      ['GREEN', 'rate-limit', null],
    ]);
    // The 429 hit GREEN's second attempt; its retry was answered with the scripted turn.
    expect(model.brain.calls.filter((call) => call.answer === 'error')).toEqual([
      { stage: 'GREEN', test: PUNCT, attempt: 2, turn: 0, answer: 'error' },
    ]);
    // One request per brain answer plus the enqueued 529: every request is in the ledger.
    expect(ledger.modelCalls).toHaveLength(modelCallRequests(model.server).length);
  });

  it('stores full model requests and responses', () => {
    const { ledger } = run;
    const succeeded = ledger.modelCalls.filter((call) => call.errorCode === null);
    expect(succeeded.length).toBeGreaterThan(20);
    for (const call of succeeded) {
      expect(call).toMatchObject({ provider: 'anthropic', model: E2E_MODEL, error: null });
      expect(call.inputTokens).toBeGreaterThan(0);
      expect(call.request).toMatchObject({
        system: expect.stringMatching(/^Stage: /) as unknown,
        messages: expect.any(Array) as unknown,
        tools: expect.any(Array) as unknown,
      });
      expect(call.response).toMatchObject({
        text: expect.any(String) as unknown,
        toolCalls: expect.any(Array) as unknown,
      });
    }
    const writeTestList = succeeded.find((call) => JSON.stringify(call.response).includes('"test-list.md"'));
    expect(writeTestList?.stage).toBe('PLAN');
  });

  it('records the tool calls of the agents', () => {
    const { ledger } = run;
    const tools = ledger.toolCalls.map((call) => `${call.stage ?? '-'} ${call.tool}${call.isError ? ' (error)' : ''}`);
    expect(tools).toEqual(
      expect.arrayContaining([
        'PLAN Write',
        'PLAN StructuredOutput',
        'RED Write',
        'RED Bash',
        'RED_FIX Write',
        'GREEN Write',
        'REFACTOR Edit',
        'FIX Edit',
        'FIX Bash',
      ]),
    );
    expect(tools.filter((tool) => tool.endsWith('(error)'))).toEqual([]);
    const env = ledger.toolCalls.find(
      (call) => call.tool === 'Bash' && JSON.stringify(call.input).includes('env | sort'),
    );
    // The shell starts from an allowlisted environment: PATH, not Ratchet's provider settings.
    expect(env?.output).toMatch(/^PATH=/m);
    expect(env?.output).not.toContain('ANTHROPIC_BASE_URL');
    expect(env?.output).not.toContain('ANTHROPIC_API_KEY');
  });

  it('records the test runs and the lint checks', () => {
    const { ledger } = run;
    const rows = ledger.verifications.map((row) => ({
      stage: row.stage,
      kind: row.kind,
      ok: row.ok,
      failed: row.failed,
    }));
    const lint = rows.filter((row) => row.kind === 'lint');
    expect(lint.map((row) => `${row.stage}:${String(row.ok)}`)).toEqual([
      'VERIFY:true',
      'RE_VERIFY:true',
      'VERIFY:true',
      'VERIFY:false',
      'RE_VERIFY:true',
    ]);
    const failedLint = ledger.verifications.find((row) => row.kind === 'lint' && row.ok === false);
    expect(failedLint?.command).toBe('node scripts/lint.mjs');
    expect(failedLint?.exitCode).toBe(1);
    // The baseline is measured once, before cycle 1's PLAN; RED reuses it and later cycles reuse
    // the run that verified the last checkpoint (PLAN changed only the test list). Failing test
    // runs for every rejection.
    expect(rows.filter((row) => row.kind === 'baseline').map((row) => row.stage)).toEqual(['PLAN']);
    expect(rows.filter((row) => row.kind === 'test' && (row.failed ?? 0) > 0).map((row) => row.stage)).toEqual([
      'RED_FIX',
      'RED',
      'GREEN',
      'RE_VERIFY',
      'RED',
    ]);
    for (const row of ledger.verifications)
      expect(row.outputFile === null || existsSync(join(repo.dir, row.outputFile))).toBe(true);
  });

  it('answers status --json and history --json from the ledger and the notes', async () => {
    const { runId, commits } = run;
    const status = await ratchet('status', runId, '--json');
    expect(status.exitCode, describeResult(status)).toBe(0);
    const parsed: unknown = JSON.parse(status.stdout);
    expect(parsed).toMatchObject({
      run: { id: runId, status: 'completed' },
      handoff: { phase: 'PLAN', nextPhase: 'COMPLETE', currentTest: null, completedTests: [...JS_ITEMS] },
      checkpoint: commits.at(-1)?.sha,
      summary: { modelCalls: { failed: 2 }, checkpoints: commits.length },
    });
    const history = await ratchet('history', '--json');
    expect(history.exitCode, describeResult(history)).toBe(0);
    const historyJson: unknown = JSON.parse(history.stdout);
    expect(historyJson).toMatchObject({
      run: runId,
      checkpoints: commits.map(
        (commit) => expect.objectContaining({ sha: commit.sha, subject: commit.subject }) as unknown,
      ),
    });
  });

  it('keeps the API key out of the ledger, the run files and the output, even when the model repeats it', async () => {
    const { result, events, runId, ledger } = run;
    const report = await ratchet('report', runId);
    expect(report.exitCode, describeResult(report)).toBe(0);
    const runDir = join(repo.dir, '.ratchet', 'runs', runId);
    expect(readFileSync(join(runDir, 'report.md'), 'utf8')).toContain(runId);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    expect(report.stdout).toContain(SLUG);
    expect(filesContaining([join(repo.dir, '.ratchet'), join(repo.home)], E2E_API_KEY)).toEqual([]);
    expect(existsSync(join(repo.dir, '.ratchet', 'ledger.db'))).toBe(true);
    for (const output of [result.stderr, report.stdout, report.stderr]) expect(output).not.toContain(E2E_API_KEY);
    // The model said the key in its last REFACTOR answer: the ledger stored it redacted, and the
    // --json stream redacts it the same way (even inside the model's own words).
    const leaked = ledger.modelCalls.find(
      (call) => call.stage === 'REFACTOR' && JSON.stringify(call.response).includes('Debug: ANTHROPIC_API_KEY='),
    );
    expect(JSON.stringify(leaked?.response)).toContain('[REDACTED]');
    expect(events.filter((event) => JSON.stringify(event).includes(E2E_API_KEY))).toEqual([]);
    expect(events.some((event) => event.type === 'model-call' && JSON.stringify(event).includes('[REDACTED]'))).toBe(
      true,
    );
  });

  it('accept fast-forwards main to the run and removes the worktree; a second run is rejected cleanly', async () => {
    const { runId, commits } = run;
    const tip = commits.at(-1)?.sha;
    const accepted = await ratchet('accept', runId, '--json');
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(JSON.parse(accepted.stdout)).toEqual({ run: runId, mode: 'fast-forward', commit: tip, removedLocks: [] });
    expect(repo.run('rev-parse', 'HEAD')).toBe(tip);
    expect(repo.run('rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(join(repo.dir, JS_IMPL_FILE), 'utf8')).toBe(JS_FINAL_IMPL);
    expect(existsSync(join(repo.home, 'worktrees', runId))).toBe(false);
    expect(repo.run('worktree', 'list', '--porcelain')).not.toContain(runId);
    expect((await readLedger(repo.dir, runId)).run?.status).toBe('accepted');
    // The branch is gone, but status, history and report still read the run back.
    const history = await ratchet('history', runId, '--json');
    const listed = z
      .object({ checkpoints: z.array(z.object({ sha: z.string(), state: z.unknown() })) })
      .parse(JSON.parse(history.stdout));
    expect(listed.checkpoints.map((checkpoint) => checkpoint.sha)).toEqual(commits.map((commit) => commit.sha));
    expect(listed.checkpoints.every((checkpoint) => checkpoint.state !== null)).toBe(true);
    const status = await ratchet('status', runId);
    expect(status.stdout).toContain('accepted, the branch was removed');
    expect(status.stdout).toMatch(/phase\s+PLAN -> COMPLETE/);

    // A second run on the accepted code: PLAN finds every item done; then it is rejected.
    const brain = createScriptedBrain({
      items: JS_ITEMS,
      steps: javascriptScript(E2E_API_KEY).steps.filter((step) => step.stage === 'PLAN' && step.test === null),
    });
    model.server.setFallback((request) => brain.reply(request));
    const second = await ratchet('tdd', 'Nothing left to do', ...ANTHROPIC_FLAGS, '--json');
    expect(brain.unexpected).toEqual([]);
    expect(second.exitCode, describeResult(second)).toBe(0);
    const secondId = parseNdjson(second.stdout).find((event) => event.type === 'run-start')?.runId;
    expect(typeof secondId).toBe('string');
    const secondBranch = `ratchet/${String(secondId)}`;
    expect(checkpointsOf(repo, tip ?? '', secondBranch).map((commit) => commit.subject)).toEqual([
      'plan: all tests done',
    ]);
    const dropped = repo.run('rev-parse', secondBranch);
    expect(repo.run('notes', '--ref', 'tdd-handoffs', 'list')).toContain(dropped);
    const rejected = await ratchet('reject', '--json');
    expect(rejected.exitCode, describeResult(rejected)).toBe(0);
    expect(JSON.parse(rejected.stdout)).toEqual({ run: secondId, status: 'rejected', removedLocks: [] });
    expect(repo.run('branch', '--list', secondBranch)).toBe('');
    // Its handoff notes went with it; the accepted run's stay.
    const notes = repo.run('notes', '--ref', 'tdd-handoffs', 'list');
    expect(notes).not.toContain(dropped);
    expect(notes).toContain(tip ?? 'no tip');
    expect(existsSync(join(repo.home, 'worktrees', String(secondId)))).toBe(false);
    expect(repo.run('rev-parse', 'HEAD')).toBe(tip);
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
  });
});
