import pc from 'picocolors';
import type { EventOf, RatchetEvent } from '../../core/events.js';
import type { TestRunResult, CheckResult } from '../../core/verification.js';
import type { Output } from '../output.js';
import { createRedactor, redactValue, secretsFromEnv } from '../../core/redact.js';
import { createStreamStripper, stripControlDeep } from '../terminal-text.js';

function short(sha: string): string {
  return sha.slice(0, 8);
}

function toolSummary(tool: string, input: unknown): string {
  if (typeof input !== 'object' || input === null) return tool;
  const record = input as Record<string, unknown>;
  const target = record.file_path ?? record.command ?? record.pattern;
  const text = typeof target === 'string' ? target.replace(/\s+/g, ' ') : '';
  return `${tool} ${text.length > 70 ? `${text.slice(0, 69)}…` : text}`.trim();
}

/** The line every command prints after removing stale git lock files. */
export function gitLockRemoveLine(files: readonly string[]): string {
  return `Removed ${files.length} stale git lock file(s) left by an interrupted git process: ${files.join(', ')}`;
}

/** What a gate's rejection is about, after its reason: ` (a, b, c and 3 more)`. */
function subjectsText(subjects: readonly string[] | undefined): string {
  if (subjects === undefined || subjects.length === 0) return '';
  const shown = subjects.slice(0, 3).join(', ');
  return pc.dim(` (${subjects.length > 3 ? `${shown} and ${subjects.length - 3} more` : shown})`);
}

/** Collection errors shown under a test run: the first line of the first three, and how many more. */
const SHOWN_COLLECTION_ERRORS = 3;

function collectionLines(errors: readonly string[]): string[] {
  const shown = errors.slice(0, SHOWN_COLLECTION_ERRORS).map((error) => {
    const first = error.split('\n').find((text) => text.trim() !== '') ?? error;
    return `could not load: ${first.length > 160 ? `${first.slice(0, 159)}…` : first}`;
  });
  const more = errors.length - shown.length;
  return more > 0 ? [...shown, `and ${more} more (see the report)`] : shown;
}

function isTestRun(result: TestRunResult | CheckResult): result is TestRunResult {
  return 'counts' in result;
}

/**
 * Human-readable progress, one line per meaningful event, without the keys a model may repeat
 * (read in a file, say): terminals and CI logs keep what they are shown. Streamed text is shown
 * a word at a time, so a key split over two deltas is still recognised. Control characters and
 * escape sequences are stripped from every field of every event first (see terminal-text.ts).
 */
export function createPlainReporter(
  output: Output,
  env: Readonly<Record<string, string | undefined>> = process.env,
): (event: RatchetEvent) => void {
  // The keys themselves (`*_KEY`, `*_TOKEN` values, `sk-...`), but not the words after labels
  // such as `Bearer`: the terminal shows the user's own test names and messages as written.
  const redact = createRedactor(secretsFromEnv(env), { shapes: 'keys' });
  let streaming = false;
  // A streamed reply's escape sequences may be cut between deltas: stripped once whole.
  const stream = createStreamStripper();
  /** Streamed text not shown yet: the word being written. */
  let pending = '';
  const endStream = (): void => {
    if (!streaming) return;
    pending += stream.flush();
    output.progress(`${redact(pending)}\n`);
    pending = '';
    streaming = false;
  };
  /** The task of a tasks run the event belongs to, in front of its line: `[TDD-1] RED ...`. */
  let task = '';
  const line = (text: string): void => {
    endStream();
    const indent = /^\s*/.exec(text)?.[0] ?? '';
    output.out(redact(task === '' ? text : `${indent}${pc.magenta(`[${task}]`)} ${text.slice(indent.length)}`));
  };
  return (raw) => {
    // Tasks run at once: their streamed replies would interleave word by word.
    if (raw.type === 'model-delta' && raw.task !== undefined) return;
    // Test names, subjects, tool input, replies: what a model wrote drives no terminal.
    const event = raw.type === 'model-delta' ? raw : stripControlDeep(raw);
    task = event.task ?? '';
    switch (event.type) {
      case 'tasks-plan':
        line(pc.bold(`${event.tasks.length} tasks, ${event.workers} worker${event.workers === 1 ? '' : 's'}`));
        break;
      case 'task-update': {
        const color =
          event.status === 'merged'
            ? pc.green
            : event.status === 'failed' || event.status === 'blocked'
              ? pc.red
              : pc.bold;
        const where = event.worker ? ` on ${event.worker}` : '';
        const commit = event.mergeCommit ? ` as ${short(event.mergeCommit)}` : '';
        line(
          `${color(event.status)}${where}${commit} ${pc.dim(`attempt ${event.attempt}`)}${event.reason ? pc.dim(` ${event.reason}`) : ''}`,
        );
        break;
      }
      case 'run-start':
        line(
          `${pc.bold(event.resumed ? 'Resuming' : 'Starting')} run ${pc.cyan(event.runId)} on branch ${event.branch}`,
        );
        line(pc.dim(`  worktree ${event.worktree} (from ${short(event.baseCommit)})`));
        break;
      case 'sandbox-start':
        line(sandboxLine(event));
        break;
      case 'cycle-start':
        line(pc.bold(`\nCycle ${event.cycle}`));
        break;
      case 'plan-select':
        line(
          event.test === null
            ? `  ${pc.green('all items of test-list.md are done')}`
            : `  next test: ${pc.cyan(event.test)} ${pc.dim(`(${event.testFile ?? '?'} -> ${event.implFile ?? '?'})`)}`,
        );
        break;
      case 'stage-start':
        line(`  ${pc.bold(event.stage.padEnd(9))} attempt ${event.attempt}`);
        break;
      case 'stage-end': {
        const mark =
          event.outcome === 'accepted'
            ? pc.green('✓ accepted')
            : event.outcome === 'skipped'
              ? pc.dim('– skipped')
              : pc.red(`✗ ${event.outcome}`);
        line(
          `  ${pc.bold(event.stage.padEnd(9))} ${mark}${event.reason ? pc.dim(` ${event.reason}`) : ''}${subjectsText(event.subjects)}`,
        );
        break;
      }
      case 'patch-check':
        if (!event.admitted) break; // The stage's end says why.
        line(
          pc.dim(`      change: ${event.files.length} file${event.files.length === 1 ? '' : 's'}, ${event.loc} lines`),
        );
        // A formatting-only batch keeps what it may and says what it restored.
        for (const violation of event.violations.slice(0, 10)) line(pc.yellow(`      restored ${violation}`));
        if (event.violations.length > 10)
          line(pc.yellow(`      restored ${event.violations.length - 10} more (see the report)`));
        break;
      case 'tool-call':
        line(pc.dim(`      ${event.isError ? pc.red('!') : '·'} ${toolSummary(event.tool, event.input)}`));
        break;
      case 'model-retry':
        line(pc.yellow(`      ↻ ${event.reason}; retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s`));
        break;
      case 'model-delta': {
        if (!event.text) break;
        streaming = true;
        pending += stream.push(event.text);
        const shown = pending.search(/\s\S*$/) + 1;
        if (shown > 0) {
          output.progress(redact(pending.slice(0, shown)));
          pending = pending.slice(shown);
        }
        break;
      }
      case 'verify-end': {
        const result = event.result;
        if (isTestRun(result)) {
          const { passed, failed, skipped } = result.counts;
          const state = result.timedOut
            ? pc.red('timed out')
            : failed > 0 || result.collectionErrors.length > 0
              ? pc.red(`${failed} failed`)
              : pc.green(`${failed} failed`);
          line(
            pc.dim(`      ${event.kind === 'baseline' ? 'baseline' : 'tests'}: ${passed} passed, `) +
              state +
              pc.dim(`${skipped ? `, ${skipped} skipped` : ''} (${result.durationMs} ms)`),
          );
          // What could not load is why RED is rejected (`collection-error`): said where it happens.
          for (const text of collectionLines(result.collectionErrors)) line(pc.red(`      ${text}`));
        } else {
          // A failed lint or typecheck says no more than its exit code here: where its output went does.
          line(
            pc.dim(`      ${event.kind}: `) +
              (result.ok ? pc.green('ok') : pc.red(`failed (exit ${String(result.exitCode)})`)) +
              (result.ok || event.outputFile === null ? '' : pc.dim(`, its output: ${event.outputFile}`)),
          );
        }
        break;
      }
      case 'checkpoint-create':
        line(`      ${pc.yellow(short(event.commit))} ${event.subject}`);
        break;
      case 'checkpoint-rollback':
        line(pc.yellow(`      ⟲ rolled back to ${short(event.to)} (${event.reason})`));
        break;
      case 'git-lock-remove':
        line(pc.yellow(`  ! ${gitLockRemoveLine(event.files)}`));
        break;
      case 'warning':
        line(pc.yellow(`  ! ${event.message}`));
        break;
      case 'log':
        line(pc.dim(`  ${event.message}`));
        break;
      case 'run-end': {
        // "Run X interrupted: Interrupted" or "Run X partial: partial: ..." would say it twice.
        const message = event.message?.startsWith(`${event.status}: `)
          ? event.message.slice(event.status.length + 2)
          : event.message;
        const said = message && message.toLowerCase() !== event.status ? `: ${message}` : '';
        line(
          event.status === 'completed'
            ? pc.green(pc.bold(`\nRun ${event.runId} completed.`))
            : pc.red(pc.bold(`\nRun ${event.runId} ${event.status}${said}`)),
        );
        break;
      }
      case 'model-call':
        // Each reply streamed ends its own line: a retry's reply does not run on from the last one.
        endStream();
        break;
      case 'note-write':
        break;
      case 'solve-pass-start': {
        const where = [event.partId, event.stepId].filter((id) => id !== null).join('/');
        const retry = event.attempt > 1 ? ` (retry ${event.attempt - 1})` : '';
        line(pc.bold(`  ▸ pass ${event.pass} ${event.passType.toUpperCase()}${where ? ` ${where}` : ''}${retry}`));
        break;
      }
      case 'solve-pass-end': {
        const tokens = event.context
          ? pc.dim(` ~${event.context.promptTokens}/${event.context.budgetTokens} prompt tokens`)
          : '';
        const reason = event.reason ? `: ${event.reason.split('\n')[0] ?? ''}` : '';
        line(event.outcome === 'ok' ? `    ${pc.green('✓')}${tokens}` : `    ${pc.red('✗')}${reason}${tokens}`);
        break;
      }
      case 'solve-attempt-end':
        break;
      case 'solve-progress':
        if (event.status !== 'running') {
          line(
            `  solve ${event.status}: ${event.stepsCompleted} steps done, ${event.stepsFailed} failed, of ${event.totalSteps} planned in ${event.totalParts} parts`,
          );
        }
        break;
    }
  };
}

/**
 * `--json`: one event per line, with secrets redacted as in the ledger. `extra` adds fields of
 * the CLI's own to the event's object (the final `run-end` gets `hint` and `next`, see drive-run.ts).
 */
export function createJsonReporter(output: Output): (event: RatchetEvent, extra?: Record<string, unknown>) => void {
  const redact = createRedactor(secretsFromEnv(process.env));
  return (event, extra) => {
    if (event.type === 'model-delta') return;
    output.out(JSON.stringify(redactValue(extra ? { ...event, ...extra } : event, redact)));
  };
}

/** The run's sandbox in one line: what the model's commands can reach, or that the user opted out. */
function sandboxLine(event: EventOf<'sandbox-start'>): string {
  if (event.mode === 'off') {
    const how = event.optOut === 'flag' ? '--no-sandbox' : '[bash] sandbox = "off"';
    return pc.yellow(
      `  ! no sandbox (${how}): the model's commands and the tests run with your rights, able to read and change anything you can`,
    );
  }
  const network = event.network === 'on' ? pc.yellow('network on ([bash] network)') : 'no network';
  const limits = event.limits
    ? `; at most ${event.limits.processes} processes, ${event.limits.fileSizeMb} MiB per file, ${event.limits.memoryMb} MiB of memory`
    : '';
  return (
    pc.dim(`  sandbox: bubblewrap, writes only to the worktree and a private /tmp, home and checkout hidden, `) +
    network +
    pc.dim(limits)
  );
}
