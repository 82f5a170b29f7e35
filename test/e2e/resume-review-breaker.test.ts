/**
 * `ratchet resume` of a `tdd` run keeps the count of the test review's circuit breaker: a review
 * that failed internally before a `kill -9` counts towards opening it after the resume, so the
 * breaker opens at the same failure as in a run that was never killed, and the run says so.
 *
 * The resume harness's two-item feature, with a review limit of 2 and RED tests the review cannot
 * parse (an assignment to a call that never runs: Node runs the file, oxc reports an error). The run
 * is killed while GREEN of cycle 1 waits for its reply, after cycle 1's review failed once.
 */
import { describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/core/events.js';
import type { AnthropicContentBlock } from '../support/fake-anthropic-server.js';
import { scriptedContent } from '../support/resume-brain.js';
import {
  describeResult,
  E2E_TIMEOUT_MS,
  HOLD_MS,
  resumeArgs,
  runCli,
  runIdOf,
  startCli,
  tddArgs,
  useResumeSuite,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const suite = useResumeSuite();
const sandbox = sandboxForThisMachine();

/**
 * A first line Node runs (V8 leaves an assignment to a call to fail when it runs, which this one
 * never does) and oxc rejects ("Cannot assign to this expression", as the language says).
 */
const UNPARSABLE = 'if (false) String() = 1;\n';

/** The REVIEW_TESTS stage ends among `events`: `cycle outcome reason`. */
function reviews(events: readonly RatchetEvent[]): string[] {
  return events.flatMap((event) =>
    event.type === 'stage-end' && event.stage === 'REVIEW_TESTS'
      ? [`${event.cycle} ${event.outcome} ${event.reason ?? ''}`]
      : [],
  );
}

function breakerWarnings(events: readonly RatchetEvent[]): string[] {
  return events.flatMap((event) =>
    event.type === 'warning' && /circuit breaker/.test(event.message) ? [event.message] : [],
  );
}

describe(`ratchet resume of a tdd run: the test review's circuit breaker${sandbox.note}`, () => {
  it(
    'counts the review failures before a kill -9: the first failure after the resume opens it, and says so',
    async () => {
      const { provider } = suite;
      const project = await suite.newProject();
      await project.repo.write({ '.ratchet/config.toml': sandbox.config('[tdd]\nreview_failure_limit = 2\n') });
      let holdGreen = true;
      provider.brain.override = (call) => {
        const { item } = call;
        if (call.stage === 'RED' && call.turn === 0 && item !== null) {
          const write = (file_path: string, content: string): AnthropicContentBlock => ({
            type: 'tool_use',
            name: 'Write',
            input: { file_path, content },
          });
          return {
            kind: 'message',
            content: [write(item.testFile, `${UNPARSABLE}${item.test}`), write(item.implFile, item.stub)],
          };
        }
        if (holdGreen && call.stage === 'GREEN' && call.turn === 0)
          return { kind: 'message', content: scriptedContent(call), delayMs: HOLD_MS };
        return undefined;
      };
      const since = provider.brain.calls.length;
      const cli = startCli(project, tddArgs());
      await cli.waitForEvent(
        (event) => event.type === 'stage-end' && event.stage === 'REVIEW_TESTS' && event.cycle === 1,
        'the review of cycle 1',
      );
      await provider.brain.waitForCall((call) => call.stage === 'GREEN', since);
      cli.kill('SIGKILL');
      const killed = await cli.exited;
      expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
      const runId = runIdOf(killed.events);
      expect(reviews(killed.events)).toEqual([
        '1 error the review failed (1 of 2 in a row): The test review could not parse test/add.test.js.',
      ]);
      expect(breakerWarnings(killed.events)).toEqual([]);

      holdGreen = false;
      const resumed = await runCli(project, resumeArgs(runId));
      expect(resumed.code, describeResult(resumed)).toBe(0);
      // Cycle 2's review is the second failure in a row: it opens the breaker, as without the kill.
      expect(reviews(resumed.events)).toEqual([
        '2 error the review failed (2 of 2 in a row): The test review could not parse test/subtract.test.js.',
      ]);
      const warnings = breakerWarnings(resumed.events);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/failed 2 times in a row \(last: The test review could not parse test\/subtract/);
    },
    E2E_TIMEOUT_MS,
  );
});
