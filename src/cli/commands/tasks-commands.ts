import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { systemClock } from '../../engine/effects.js';
import { planTasks } from '../../engine/tasks/plan-tasks.js';
import { startRun } from '../../engine/start-run.js';
import { requireRedis } from '../../engine/queue/redis-check.js';
import { readTasksInput, tasksWorkflow } from '../../workflows/tasks/definition.js';
import { RatchetError } from '../../core/errors.js';
import { resolveRun } from '../../engine/run-lookup.js';
import { retryTask, skipTask } from '../../engine/tasks/task-decisions.js';
import {
  configFor,
  createCliOutput,
  openExistingRepoLedger,
  repositoryRoot,
  startServices,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import type { Ledger } from '../../ledger/types.js';

interface RunFlags extends ProviderFlags {
  workers?: string;
  queue?: string;
  publish?: string;
  allowDirty?: boolean;
  record?: string;
}

interface PlanFlags extends ProviderFlags {
  out?: string;
  record?: string;
}

/** A start of a task on a worker, as its `task-update` `running` event recorded it. */
interface TaskStart {
  task: string;
  attempt: number;
  worker: string | null;
  /** The start of its queue job (2 and more: re-delivered after its worker died); null in the local pool. */
  delivery: number | null;
}

async function taskStarts(ledger: Ledger, runId: string): Promise<TaskStart[]> {
  return (await ledger.events(runId, { types: ['task-update'] })).flatMap((event) =>
    event.type === 'task-update' && event.status === 'running'
      ? [{ task: event.task, attempt: event.attempt, worker: event.worker ?? null, delivery: event.delivery ?? null }]
      : [],
  );
}

function describeStart(start: TaskStart): string {
  const where = start.worker ?? 'a worker';
  if (start.delivery === null) return `${where} (attempt ${start.attempt})`;
  const again = start.delivery > 1 ? ', re-delivered: the worker before stopped answering' : '';
  return `${where} (attempt ${start.attempt}, delivery ${start.delivery}${again})`;
}

/** `--publish`: a URL as given, a path made absolute (from where the user typed it), null when absent. */
function publishUrl(value: string | undefined): string | null {
  if (value === undefined) return null;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : resolve(value);
}

/** `ratchet tasks ...`: decompose a specification into tasks (seed 000's DECOMPOSE). */
export function registerTasksCommands(program: Command, cli: CliSetup): void {
  const tasks = program
    .command('tasks')
    .description('Decompose a specification into tasks (tasks plan) and run them in a pool of workers (tasks run)');

  addProviderOptions(
    tasks
      .command('run')
      .description(
        'Run the tasks of a tasks file, each through the TDD pipeline in its own worktree and branch, up to --workers at once; finished tasks merge into ratchet/<run-id> in dependency order, the full suite running after each merge',
      )
      .argument(
        '<tasks-file>',
        'the tasks file (JSON, as `tasks plan` writes it); it and the spec it names are inputs: they may be uncommitted',
      ),
  )
    .option(
      '--workers <n>',
      "tasks at once, in worker processes of this machine (one per core at most; not with --queue: the workers' --concurrency decides)",
      '1',
    )
    .option(
      '--queue <url>',
      'run the tasks on `ratchet worker --queue <url>` processes (any machine) instead of here: redis://host:port[/db] (its password in REDIS_PASSWORD, never in the URL: the run stores it)',
    )
    .option(
      '--publish <url>',
      'with --queue: the repository the workers fetch the run from and push their task branches to (a path, ssh:// or https://, which both sides reach); default a bare repository this run creates, $RATCHET_HOME/published/<run-id>.git',
    )
    .option('--allow-dirty', 'start from HEAD even though the working tree has uncommitted changes')
    .option('--refactor <mode>', 'always | when-needed | never (default from config: always)')
    .option('--max-attempts <n>', 'attempts per stage before a task fails (default 3)')
    .action(async (file: string, flags: RunFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      // Before the run exists (and before Redis is asked): a tasks file that cannot run refuses it.
      // The file and the specification it was planned from are the run's inputs, not changes.
      const input = await readTasksInput(resolve(file));
      const inputs = [resolve(file), ...(input.spec === null ? [] : [resolve(repoRoot, input.spec)])];
      if (flags.queue !== undefined) {
        // The workers' own --concurrency decides how many tasks run at once; a --workers here would do nothing.
        if (command.getOptionValueSource('workers') === 'cli')
          throw new RatchetError(
            'usage',
            '--workers sets the local pool; with --queue the workers decide how many tasks run at once.',
            {
              hint: 'Drop --workers, and start each `ratchet worker --queue ...` with the --concurrency it should have.',
            },
          );
        // A queue nobody can reach refuses it too.
        if (/^rediss?:\/\/[^/@]*(?:\/|$)/.test(flags.queue))
          await requireRedis(flags.queue, process.env.REDIS_PASSWORD || undefined);
      }
      const interrupt = interruptOnSignals();
      try {
        const run = startRun(
          tasksWorkflow,
          {
            directory: repoRoot,
            request: {
              tasksFile: resolve(file),
              workers: Number(flags.workers ?? '1'),
              ...(flags.queue === undefined ? {} : { queue: { url: flags.queue, publish: publishUrl(flags.publish) } }),
            },
            config,
            allowDirty: Boolean(flags.allowDirty),
            inputs,
            signal: interrupt.signal,
            ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
          },
          startServices(),
        );
        const { code, outcome } = await driveRun(run, output, interrupt.bySigint);
        if (!output.json)
          output.out(
            `Per task: ${pc.cyan(`ratchet tasks status ${outcome.runId}`)}; then ${pc.cyan('ratchet accept')} to merge or ${pc.cyan('ratchet reject')} to drop the run.`,
          );
        cli.setExit(code);
      } finally {
        interrupt.dispose();
      }
    });

  tasks
    .command('status')
    .description('Show every task of a tasks run: status, attempts, branch, merge commit, and each stage attempt')
    .argument('[run]', 'run id (default: the latest run)')
    .action(async (runId: string | undefined, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command, runId);
      await using ledger = await openExistingRepoLedger(repoRoot, runId);
      const run = await resolveRun(ledger, runId);
      const rows = await ledger.tasks.tasks(run.id);
      const attempts = await ledger.tasks.attempts(run.id);
      const starts = await taskStarts(ledger, run.id);
      if (output.json) {
        output.out(
          JSON.stringify({
            run: { id: run.id, status: run.status, branch: run.branch },
            tasks: rows,
            attempts,
            starts,
          }),
        );
        return;
      }
      output.out(`${pc.bold('Run')} ${pc.cyan(run.id)} ${pc.dim(`(${run.workflow})`)}  ${run.status}`);
      if (rows.length === 0)
        output.out(pc.dim('  no tasks recorded (not a tasks run, or it stopped before its tasks were recorded)'));
      for (const row of rows) {
        const color =
          row.status === 'merged' ? pc.green : row.status === 'failed' || row.status === 'blocked' ? pc.red : pc.yellow;
        const merge = row.mergeCommit ? ` merged as ${row.mergeCommit.slice(0, 8)}` : '';
        output.out(
          `${pc.bold(row.key.padEnd(10))} ${color(row.status.padEnd(8))} attempts ${row.attempts}${merge}  ${row.title}`,
        );
        if (row.reason) output.out(pc.dim(`           ${row.reason}`));
        const ran = starts.filter((start) => start.task === row.key).map(describeStart);
        if (ran.length > 0) output.out(pc.dim(`           ran on ${ran.join(', ')}`));
        const stages = attempts
          .filter((attempt) => attempt.taskKey === row.key)
          .map(
            (attempt) => `${attempt.stage}${attempt.success === true ? '✓' : attempt.success === false ? '✗' : '…'}`,
          );
        if (stages.length > 0) output.out(pc.dim(`           ${stages.join(' ')}`));
      }
    });

  for (const [name, decide, what] of [
    [
      'retry',
      retryTask,
      'Let a failed or blocked task of a tasks run run again (its blocked dependents too); `ratchet resume` runs them',
    ],
    [
      'skip',
      skipTask,
      'Skip a task of a tasks run: it will not run, and its dependents run as if it had merged; `ratchet resume` goes on',
    ],
  ] as const) {
    tasks
      .command(name)
      .description(what)
      .argument('<task>', 'the task key')
      .option('--run <id>', 'the run (default: the latest run)')
      .action(async (key: string, flags: { run?: string }, command: Command) => {
        const output = createCliOutput(command);
        const repoRoot = await repositoryRoot(command, flags.run);
        await using ledger = await openExistingRepoLedger(repoRoot, flags.run);
        const run = await resolveRun(ledger, flags.run);
        const { task, freed } = await decide(ledger, run.id, key);
        if (output.json) {
          output.out(JSON.stringify({ task: task.key, status: task.status, freed }));
          return;
        }
        output.out(`${task.key}: ${task.status}${freed.length > 0 ? `; ${freed.join(', ')} wait again` : ''}`);
        output.out(`Continue the run: ${pc.cyan(`ratchet resume ${run.id}`)}`);
      });
  }

  addProviderOptions(
    tasks
      .command('plan')
      .description(
        'Ask the model to split a specification into tasks (key, goal, acceptance criteria, test and implementation file, dependencies, exports), validate them, and write the tasks file for you to review',
      )
      .argument('<spec>', 'the specification, a Markdown or text file'),
    // Planning only asks the model and writes the file: no command runs, so no sandbox to opt out of.
    { sandbox: false, providers: 'anthropic | openai | openai-compatible | ollama | replay (not claude-code)' },
  )
    .option('--out <file>', 'where to write the tasks file', 'tasks.json')
    .action(async (spec: string, flags: PlanFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      const interrupt = interruptOnSignals();
      try {
        const result = await planTasks({
          repoRoot,
          // Paths on the command line are relative to where the user typed them.
          specFile: resolve(spec),
          outFile: resolve(flags.out ?? 'tasks.json'),
          config,
          env: process.env,
          clock: systemClock,
          signal: interrupt.signal,
          ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
        });
        if (output.json) {
          output.out(
            JSON.stringify({
              type: 'tasks-planned',
              file: result.outFile,
              calls: result.calls,
              corrected: result.corrected,
              tasks: result.file.tasks,
            }),
          );
          return;
        }
        if (result.corrected.length > 0)
          output.out(
            pc.dim(`The first answer was invalid (${result.corrected.length} problem(s)); the corrected one is used.`),
          );
        for (const task of result.file.tasks) {
          const after = task.dependsOn.length > 0 ? pc.dim(` after ${task.dependsOn.join(', ')}`) : '';
          output.out(`${pc.bold(task.key)} ${task.title} ${pc.dim(`(${task.implFile}, ${task.testFile})`)}${after}`);
        }
        output.out(
          `Wrote ${result.file.tasks.length} tasks to ${result.outFile}. Review it, then: ${pc.cyan(`ratchet tasks run ${flags.out ?? 'tasks.json'}`)}`,
        );
      } finally {
        interrupt.dispose();
      }
    });
}
