/**
 * The plain reporter shows what the ledger and --json would store: a key a model repeats (in a
 * streamed answer, even split over deltas, or in a tool call) is redacted on the terminal too.
 */
import { describe, expect, it } from 'vitest';
import type { EventInput, RatchetEvent } from '../../src/core/events.js';
import type { Output } from '../../src/cli/output.js';
import { createPlainReporter } from '../../src/cli/reporters/plain-reporter.js';

const KEY = 'sk-ant-test-plain-reporter-0123456789';
const ENV = { ANTHROPIC_API_KEY: KEY };

function capture(): { output: Output; shown: () => string } {
  const parts: string[] = [];
  return {
    output: {
      json: false,
      out: (line) => parts.push(`${line}\n`),
      err: (line) => parts.push(`${line}\n`),
      progress: (text) => parts.push(text),
    },
    // Without colours.
    shown: () => parts.join('').replace(/\u001b\[[0-9;]*m/g, ''),
  };
}

let seq = 0;
const event = (input: EventInput): RatchetEvent => ({
  ...input,
  id: `run:${++seq}`,
  runId: 'run',
  timestamp: '2026-01-01T00:00:00.000Z',
});

describe('plain reporter', () => {
  it('redacts a key streamed over several deltas, and shows the rest of the text', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    const text = `Nothing worth changing. (Debug: ANTHROPIC_API_KEY=${KEY})`;
    for (let index = 0; index < text.length; index += 7)
      report(event({ type: 'model-delta', text: text.slice(index, index + 7) }));
    report(event({ type: 'warning', message: 'done' }));

    expect(shown()).not.toContain(KEY);
    expect(shown()).not.toContain('0123456789');
    expect(shown()).toBe('Nothing worth changing. (Debug: ANTHROPIC_API_KEY=[REDACTED])\n  ! done\n');
  });

  it('redacts keys in tool calls and messages', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(
      event({
        type: 'tool-call',
        stage: 'GREEN',
        tool: 'Bash',
        input: { command: `curl -H "x-api-key: ${KEY}" https://example.com` },
        output: '',
        isError: false,
        durationMs: 1,
      }),
    );
    report(event({ type: 'run-end', status: 'failed', message: `the key ${KEY} was rejected` }));

    expect(shown()).not.toContain(KEY);
    expect(shown()).toContain('· Bash curl -H "x-api-key: [REDACTED]');
    expect(shown()).toContain('failed: the key [REDACTED] was rejected');
  });

  it('says a bare interruption once: "Run X interrupted", not "Run X interrupted: Interrupted"', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(event({ type: 'run-end', status: 'interrupted', message: 'Interrupted' }));
    report(event({ type: 'run-end', status: 'interrupted', message: 'Interrupted while running the fast verifier' }));

    expect(shown()).toBe('\nRun run interrupted\n\nRun run interrupted: Interrupted while running the fast verifier\n');
  });

  it('says a status that starts its message once: "Run X partial: 0 of 2 tasks merged."', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(event({ type: 'run-end', status: 'partial', message: 'partial: 0 of 2 tasks merged.\nEMPTY: failed' }));

    expect(shown()).toBe('\nRun run partial: 0 of 2 tasks merged.\nEMPTY: failed\n');
  });

  it('leaves the words after labels such as Bearer alone (they are not keys)', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(
      event({
        type: 'plan-select',
        cycle: 1,
        test: 'rejects a missing Bearer authorization header',
        testFile: 't.js',
        implFile: 'i.js',
      }),
    );
    expect(shown()).toContain('next test: rejects a missing Bearer authorization header (t.js -> i.js)');
  });

  it('ends each streamed reply on its own line', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(event({ type: 'model-delta', text: 'first repl' }));
    report(event({ type: 'model-delta', text: 'y' }));
    report(
      event({
        type: 'model-call',
        stage: 'PLAN',
        provider: 'anthropic',
        model: 'm',
        request: { system: '', messages: [], tools: [] },
        response: null,
        error: { code: 'overloaded', message: 'overloaded' },
        latencyMs: 1,
      }),
    );
    report(event({ type: 'model-delta', text: 'second' }));
    report(event({ type: 'cycle-start', cycle: 2, test: null }));

    expect(shown()).toBe('first reply\nsecond\n\nCycle 2\n');
  });

  it('says at the start how the model`s commands run: sandboxed with what, or not, and who chose that', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, {});
    report(
      event({
        type: 'sandbox-start',
        mode: 'bubblewrap',
        network: 'off',
        limits: { processes: 4096, fileSizeMb: 4096, memoryMb: 8192, minFreeDiskMb: 1024 },
      }),
    );
    report(event({ type: 'sandbox-start', mode: 'bubblewrap', network: 'on' }));
    report(event({ type: 'sandbox-start', mode: 'off', optOut: 'flag', network: 'on' }));
    report(event({ type: 'sandbox-start', mode: 'off', optOut: 'config', network: 'on' }));
    expect(shown().split('\n')).toEqual([
      '  sandbox: bubblewrap, writes only to the worktree and a private /tmp, home and checkout hidden, no network; at most 4096 processes, 4096 MiB per file, 8192 MiB of memory',
      '  sandbox: bubblewrap, writes only to the worktree and a private /tmp, home and checkout hidden, network on ([bash] network)',
      "  ! no sandbox (--no-sandbox): the model's commands and the tests run with your rights, able to read and change anything you can",
      '  ! no sandbox ([bash] sandbox = "off"): the model\'s commands and the tests run with your rights, able to read and change anything you can',
      '',
    ]);
  });

  it("names the task of a tasks run's events, shows every worker's task and stage, and no task's streamed text", () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    report(event({ type: 'task-update', task: 'T1', status: 'running', attempt: 1, worker: 'worker-1' }));
    report(event({ type: 'task-update', task: 'T2', status: 'running', attempt: 1, worker: 'worker-2' }));
    report(event({ type: 'stage-start', stage: 'RED', phase: 'RED', cycle: 1, attempt: 1, task: 'T2' }));
    report(event({ type: 'model-delta', text: 'interleaved words ', task: 'T1' }));
    report(
      event({
        type: 'stage-end',
        stage: 'GREEN',
        phase: 'GREEN',
        cycle: 1,
        attempt: 1,
        outcome: 'accepted',
        task: 'T1',
      }),
    );
    report(event({ type: 'task-update', task: 'T1', status: 'merged', attempt: 1, mergeCommit: 'abcdef1234567890' }));
    report(event({ type: 'warning', message: 'not a task event' }));
    expect(shown()).toBe(
      [
        '[T1] running on worker-1 attempt 1',
        '[T2] running on worker-2 attempt 1',
        '  [T2] RED       attempt 1',
        '  [T1] GREEN     ✓ accepted',
        '[T1] merged as abcdef12 attempt 1',
        '  ! not a task event',
        '',
      ].join('\n'),
    );
  });

  it('says under a test run what could not load, the first line of the first three', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    const errors = [
      'tests/version_display.rs: error[E0603]: struct `Version` is private\n --> tests/version_display.rs:3:14',
      'tests/a.rs: error[E0425]: cannot find function `a`',
      'tests/b.rs: error[E0425]: cannot find function `b`',
      'tests/c.rs: error[E0425]: cannot find function `c`',
    ];
    report(
      event({
        type: 'verify-end',
        stage: 'RED',
        kind: 'test',
        outputFile: null,
        result: {
          command: 'cargo test --no-fail-fast',
          exitCode: 101,
          timedOut: false,
          durationMs: 942,
          output: '',
          tests: [],
          collectionErrors: errors,
          source: 'cargo',
          counts: { passed: 0, failed: 0, skipped: 0, total: 0 },
        },
      }),
    );
    expect(shown()).toBe(
      [
        '      tests: 0 passed, 0 failed (942 ms)',
        '      could not load: tests/version_display.rs: error[E0603]: struct `Version` is private',
        '      could not load: tests/a.rs: error[E0425]: cannot find function `a`',
        '      could not load: tests/b.rs: error[E0425]: cannot find function `b`',
        '      and 1 more (see the report)',
        '',
      ].join('\n'),
    );
  });

  it('names what a rejected stage is about after its reason', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    const stageEnd = (subjects: string[]): RatchetEvent =>
      event({
        type: 'stage-end',
        stage: 'GREEN',
        phase: 'GREEN',
        cycle: 1,
        attempt: 1,
        outcome: 'rejected',
        reason: 'tests-not-run',
        subjects,
      });
    report(stageEnd(['src/lib.rs - probe (line 532)']));
    report(stageEnd(['a', 'b', 'c', 'd', 'e']));
    expect(shown()).toBe(
      [
        '  GREEN     ✗ rejected tests-not-run (src/lib.rs - probe (line 532))',
        '  GREEN     ✗ rejected tests-not-run (a, b, c and 2 more)',
        '',
      ].join('\n'),
    );
  });

  it('names where the output of a failed lint or typecheck is, and nothing more for a passing one', () => {
    const { output, shown } = capture();
    const report = createPlainReporter(output, ENV);
    const check = (ok: boolean) => ({
      name: 'lint',
      command: 'npm run lint',
      exitCode: ok ? 0 : 1,
      timedOut: false,
      durationMs: 5,
      output: '',
      ok,
    });
    const outputFile = '.ratchet/runs/r/verify/003-verify-lint.log';
    report(event({ type: 'verify-end', stage: 'VERIFY', kind: 'lint', outputFile, result: check(false) }));
    report(event({ type: 'verify-end', stage: 'VERIFY', kind: 'lint', outputFile, result: check(true) }));
    expect(shown()).toBe(`      lint: failed (exit 1), its output: ${outputFile}\n      lint: ok\n`);
  });
});
