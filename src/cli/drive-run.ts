import pc from 'picocolors';
import type { RatchetEvent } from '../core/events.js';
import type { RunOutcome } from '../engine/run-process.js';
import { exitCodeFor, EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import { createJsonReporter, createPlainReporter } from './reporters/plain-reporter.js';

/**
 * Cancellation for a run: the first SIGINT (or SIGTERM) aborts the signal so the engine stops at
 * the next safe point and the run stays resumable; a second one exits at once.
 */
export function interruptOnSignals(): { signal: AbortSignal; bySigint: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let sigint = false;
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(EXIT.sigint);
    sigint = name === 'SIGINT';
    process.stderr.write(pc.yellow(`\n${name}: stopping at the next safe point (press again to quit now)…\n`));
    controller.abort(new Error(name));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    bySigint: () => sigint,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * What to do about a run that did not complete, for people and for `--json` consumers alike:
 * the error's own hint and the command that continues the run.
 */
interface NextStep {
  /** The command line to run, e.g. `ratchet resume 20261121-233624-a1b2`. */
  command: string;
  /** The same as arguments of the `ratchet` binary, for spawning without a shell. */
  argv: string[];
}

function nextStepOf(outcome: RunOutcome): NextStep | null {
  if (outcome.status === 'completed' || outcome.status === 'cancelled') return null;
  // A suite that already failed before the cycle's RED is fixed on the user's branch, not by
  // resuming this run: it is dropped.
  if (outcome.error?.details?.reason === 'red-baseline')
    return { command: `ratchet reject ${outcome.runId}`, argv: ['reject', outcome.runId] };
  // A run of a workflow that does not resume runs is accepted or dropped instead: its command says how.
  if (!outcome.resumable) return null;
  return { command: `ratchet resume ${outcome.runId}`, argv: ['resume', outcome.runId] };
}

/**
 * The one line plain output ends an interrupted run with (instead of the reporter's `run-end`
 * line and a separate resume line): what stopped it and how to go on, e.g.
 * `Run X interrupted (SIGINT); resume with: ratchet resume X`.
 */
function interruptedLine(outcome: RunOutcome, step: NextStep | null): string {
  const signal = outcome.error?.details?.signal;
  const by = typeof signal === 'string' ? ` (${signal})` : '';
  const next = step ? `; ${step.argv[0] === 'resume' ? 'resume with' : 'then'}: ${step.command}` : '';
  return `${pc.red(pc.bold(`\nRun ${outcome.runId} interrupted${by}`))}${next}`;
}

/**
 * Renders a run's events and returns the process exit code. After a run that failed, plain
 * output ends with the error's hint and the resume command on stderr; an interrupted run ends
 * with one line on stderr saying so, with the resume command. With `--json` the final `run-end`
 * object carries the same as `hint` (string or null) and `next` (`{command, argv}`, or null once
 * the run completed).
 */
export async function driveRun(
  run: AsyncGenerator<RatchetEvent, RunOutcome>,
  output: Output,
  bySigint: () => boolean,
): Promise<{ code: number; outcome: RunOutcome }> {
  const json = output.json ? createJsonReporter(output) : undefined;
  const report = json ?? createPlainReporter(output);
  // --json: the run-end event is held back until the outcome (and its hint) is known; plain
  // output holds back an interrupted run's, which ends with its own line (see interruptedLine).
  let runEnd: RatchetEvent | undefined;
  let next = await run.next();
  while (!next.done) {
    if (runEnd) report(runEnd);
    runEnd = undefined;
    const event = next.value;
    if (event.type === 'run-end' && (json || event.status === 'interrupted')) runEnd = event;
    else report(event);
    next = await run.next();
  }
  const outcome = next.value;
  const step = nextStepOf(outcome);
  if (json) {
    if (runEnd) json(runEnd, { hint: outcome.error?.hint ?? null, next: step });
  } else if (outcome.status === 'interrupted') {
    if (outcome.error?.hint) output.err(pc.dim(`hint: ${outcome.error.hint}`));
    output.err(interruptedLine(outcome, step));
  } else if (outcome.error) {
    if (runEnd) report(runEnd);
    if (outcome.error.hint) output.err(pc.dim(`hint: ${outcome.error.hint}`));
    if (step) output.err(pc.dim(`${step.argv[0] === 'resume' ? 'Resume with' : 'Then'}: ${step.command}`));
  }
  if (outcome.status === 'completed' || outcome.status === 'cancelled') return { code: EXIT.ok, outcome };
  return { code: outcome.error ? exitCodeFor(outcome.error.code, bySigint()) : EXIT.gateFailed, outcome };
}
