import pc from 'picocolors';
import type { RatchetEvent } from '../core/events.js';
import type { RunOutcome } from '../engine/tdd-run.js';
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

/** Renders a run's events and returns the process exit code. */
export async function driveRun(run: AsyncGenerator<RatchetEvent, RunOutcome>, output: Output, bySigint: () => boolean): Promise<{ code: number; outcome: RunOutcome }> {
  const report = output.json ? createJsonReporter(output) : createPlainReporter(output);
  let next = await run.next();
  while (!next.done) {
    report(next.value);
    next = await run.next();
  }
  const outcome = next.value;
  if (outcome.error && !output.json) {
    if (outcome.error.hint) output.err(pc.dim(`hint: ${outcome.error.hint}`));
    if (outcome.status !== 'completed') output.err(pc.dim(`Resume with: ratchet resume ${outcome.runId}`));
  }
  if (outcome.status === 'completed') return { code: EXIT.ok, outcome };
  return { code: outcome.error ? exitCodeFor(outcome.error.code, bySigint()) : EXIT.gateFailed, outcome };
}
