/**
 * End to end: the built CLI runs `ratchet tdd --provider claude-code` on a node:test project.
 * Each TDD stage is one headless call of the REAL `claude` binary (named in
 * `.ratchet/config.toml`, `[refactor.claude] binary`), which runs its own tool loop in the
 * worktree against the loopback fake Anthropic server; the fake's fallback plays the model's side
 * of that loop (see test/support/claude-tdd-brain.ts): Write/Read/Edit/Bash tool calls, and the
 * `StructuredOutput` tool for PLAN's answer.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { promptFileName } from '../../src/agent/claude-code/prompt-file.js';
import type { StageName } from '../../src/core/stages.js';
import { claudeBinary } from '../support/claude-binary.js';
import {
  CLAUDE_FEATURE,
  CLAUDE_FINAL_IMPL,
  CLAUDE_FINAL_TEST,
  CLAUDE_IMPL_FILE,
  CLAUDE_ITEMS,
  CLAUDE_PROJECT_FILES,
  CLAUDE_TEST_FILE,
  createClaudeTddBrain,
  type ClaudeTddBrain,
} from '../support/claude-tdd-brain.js';
import { checkoutState, createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { assertFreshBuild } from '../support/run-cli.js';
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
import { toolchain } from '../support/toolchains.js';

const [ADD, SUB] = CLAUDE_ITEMS;
/** The stages of the run, one `claude -p` call each. */
const STAGES: StageName[] = ['PLAN', 'RED', 'GREEN', 'REFACTOR', 'PLAN', 'RED', 'GREEN', 'REFACTOR', 'PLAN'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const bodySchema = z.looseObject({
  system: z.array(z.looseObject({ text: z.string() })),
  tools: z.array(z.looseObject({ name: z.string() })),
});
const requestSchema = z.looseObject({ system: z.string() });

function sessionOf(request: RecordedRequest): string {
  const value = request.headers['x-claude-code-session-id'];
  return typeof value === 'string' ? value : '(none)';
}

/** The `Stage: X` line of the system prompt the CLI sent. */
function stageOf(request: RecordedRequest): string | undefined {
  const text = bodySchema
    .parse(request.body)
    .system.map((block) => block.text)
    .join('\n');
  return /^Stage: (\w+)/m.exec(text)?.[1];
}

/** The run's Claude Code CLI runs in the sandbox (one test checks that it said nothing about it). */
const tools = toolchain('claude', 'bwrap');

describe.skipIf(tools.missing)(
  `ratchet tdd --provider claude-code (real claude binary, fake Anthropic server)${tools.note}`,
  () => {
    let repo: ProjectRepo;
    let server: FakeAnthropicServer;
    let brain: ClaudeTddBrain;
    let run: TddRun;

    beforeAll(async () => {
      assertFreshBuild();
      const binary = claudeBinary();
      repo = await createProjectRepo({
        ...CLAUDE_PROJECT_FILES,
        '.ratchet/config.toml': `[tdd]\nrefactor = "always"\n\n[refactor.claude]\nbinary = ${JSON.stringify(binary)}\n`,
      });
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      brain = createClaudeTddBrain();
      server.setFallback((request) => brain.reply(request));
      run = await runTdd(repo, [CLAUDE_FEATURE, '--provider', 'claude-code'], {
        env: {
          ...ratchetEnv(repo, server),
          // The CLI's HOME is the repo's temporary one (repo.env); no telemetry, no retries of its own.
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          CLAUDE_CODE_MAX_RETRIES: '0',
        },
        timeoutMs: 100_000,
      });
    }, 120_000);

    afterAll(async () => {
      // Undefined when beforeAll failed early.
      await (server as FakeAnthropicServer | undefined)?.close();
      await (repo as ProjectRepo | undefined)?.cleanup();
    });

    it('completes with exit code 0, the brain playing every scripted stage once', () => {
      const { result, events, runId, ledger } = run;
      expectPlayedAsScripted(brain, result);
      expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'completed' });
      // Claude Code's tools took every Write, Edit and Read; only `node --test` in RED failed.
      expect(brain.toolErrors.map((error) => `${error.stage} ${error.tool}`)).toEqual(['RED Bash']);
      expect(brain.toolErrors[0]?.output).toContain(`✖ ${ADD}`);
      expect(brain.toolErrors[0]?.output).toContain('0 !== 5');
      expect(ledger.run).toMatchObject({ id: runId, status: 'completed', provider: 'claude-code', error: null });
    });

    it('runs the Claude Code CLI itself in the sandbox, with a private configuration per call', () => {
      const { events } = run;
      expect(events.filter((event) => event.type === 'warning').map((event) => String(event.message))).toEqual([]);
      // The CLI kept its transcripts and its `.claude.json` in a directory of its own under
      // $RATCHET_HOME (removed after each call), not in the user's HOME.
      expect(readdirSync(join(repo.home, 'claude-code'))).toEqual([]);
      expect(existsSync(repo.path('home', '.claude'))).toBe(false);
      expect(existsSync(repo.path('home', '.claude.json'))).toBe(false);
    });

    it('commits plan, test, feat and refactor per item, then the final plan, each with a handoff note', () => {
      const { runId, commits } = run;
      expect(commits.map((commit) => commit.subject)).toEqual([
        ...cycleSubjects(ADD, false),
        ...cycleSubjects(SUB, false),
        'plan: all tests done',
      ]);
      const note = noteBuilder(runId, CLAUDE_ITEMS, { testFile: CLAUDE_TEST_FILE, implFile: CLAUDE_IMPL_FILE });
      expect(commits.map((commit) => comparedNote(commit.note))).toEqual([
        note('PLAN', 'RED', 1, ADD, [], null),
        note('RED', 'GREEN', 1, ADD, [], 'FAIL'),
        note('GREEN', 'REFACTOR', 1, ADD, [ADD], 'PASS'),
        note('REFACTOR', 'PLAN', 1, ADD, [ADD], 'PASS'),
        note('PLAN', 'RED', 2, SUB, [ADD], null),
        note('RED', 'GREEN', 2, SUB, [ADD], 'FAIL'),
        note('GREEN', 'REFACTOR', 2, SUB, [ADD, SUB], 'PASS'),
        note('REFACTOR', 'PLAN', 2, SUB, [ADD, SUB], 'PASS'),
        note('PLAN', 'COMPLETE', 3, null, [ADD, SUB], null),
      ]);
    });

    it('leaves the files the model wrote through Claude Code on the branch, not in the checkout', () => {
      const { before, runId } = run;
      const branch = `ratchet/${runId}`;
      expect(testListItems(repo, branch)).toEqual(CLAUDE_ITEMS.map((item) => `- [x] ${item}`));
      expect(`${repo.run('show', `${branch}:${CLAUDE_TEST_FILE}`)}\n`).toBe(CLAUDE_FINAL_TEST);
      // Claude Code left nothing of its own (settings, session files) in the worktree's commits.
      expect(repo.run('ls-tree', '-r', '--name-only', branch).split('\n').sort()).toEqual(
        [
          ...Object.keys(CLAUDE_PROJECT_FILES),
          '.ratchet/config.toml',
          'test-list.md',
          CLAUDE_TEST_FILE,
          CLAUDE_IMPL_FILE,
        ].sort(),
      );
      expect(`${repo.run('show', `${branch}:${CLAUDE_IMPL_FILE}`)}\n`).toBe(CLAUDE_FINAL_IMPL);
      expect(checkoutState(repo)).toEqual(before);
      expect(existsSync(join(repo.dir, CLAUDE_IMPL_FILE))).toBe(false);
    });

    it("records one claude-code model call per stage, with the CLI's cost and tokens", () => {
      const { ledger } = run;
      expect(ledger.modelCalls.map((call) => call.stage)).toEqual(STAGES);
      for (const call of ledger.modelCalls) {
        expect(call).toMatchObject({ provider: 'claude-code', errorCode: null, finishReason: 'stop' });
        // No --model: the CLI's default model, as it reported it.
        expect(call.model).toMatch(/^claude-/);
        expect(call.costUsd).toBeGreaterThan(0);
        expect(call.inputTokens).toBeGreaterThan(0);
        expect(requestSchema.parse(call.request).system).toMatch(new RegExp(`^Stage: ${call.stage ?? '?'}\\n`));
      }
      // Every stage attempt was accepted.
      expect(ledger.stages.filter((row) => row.outcome !== 'accepted').map(stageLine)).toEqual([]);
    });

    it('runs every stage as a fresh Claude Code session', () => {
      const { events } = run;
      // The session id the CLI sends with every request of a call: one per stage, never reused.
      const sessions: string[] = [];
      for (const request of server.requests) {
        const session = sessionOf(request);
        if (!sessions.includes(session)) sessions.push(session);
      }
      expect(sessions).toHaveLength(STAGES.length);
      for (const session of sessions) expect(session).toMatch(UUID);
      const stagesBySession = sessions.map((session) => [
        ...new Set(server.requests.filter((request) => sessionOf(request) === session).map(stageOf)),
      ]);
      expect(stagesBySession).toEqual(STAGES.map((stage) => [stage]));
      // Each call's log line names the session id Ratchet chose with --session-id.
      const logged = events
        .filter((event) => event.type === 'log' && String(event.message).startsWith('claude-code '))
        .map((event) => /session (\S+),/.exec(String(event.message))?.[1]);
      expect(logged).toEqual(sessions);
      // Only PLAN gets the StructuredOutput tool (from --json-schema); the tools are Claude Code's.
      for (const request of server.requests) {
        const tools = bodySchema.parse(request.body).tools.map((tool) => tool.name);
        expect(tools).toEqual(expect.arrayContaining(['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']));
        expect(tools.includes('StructuredOutput')).toBe(stageOf(request) === 'PLAN');
      }
    });

    it('writes each system prompt to a content-addressed file under .ratchet/runs/<id>/prompts', () => {
      const { runId, ledger } = run;
      const promptDir = join(repo.dir, '.ratchet', 'runs', runId, 'prompts');
      const systemOf = new Map<StageName, string>();
      for (const call of ledger.modelCalls)
        if (call.stage) systemOf.set(call.stage, requestSchema.parse(call.request).system);
      const expected = [...systemOf].map(([stage, system]) => promptFileName(stage, system)).sort();
      expect(expected).toHaveLength(4);
      expect(readdirSync(promptDir).sort()).toEqual(expected);
      for (const [stage, system] of systemOf) {
        const file = readFileSync(join(promptDir, promptFileName(stage, system)), 'utf8');
        expect(file).toBe(system);
        expect(file.startsWith(`Stage: ${stage}\n`)).toBe(true);
      }
      // The CLI sent the file's content as a system block of every request of its stage.
      for (const request of server.requests) {
        const stage = stageOf(request) as StageName;
        expect(bodySchema.parse(request.body).system.map((block) => block.text)).toContain(systemOf.get(stage));
      }
    });
  },
);
