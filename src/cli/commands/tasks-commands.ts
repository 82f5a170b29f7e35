import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { systemClock } from '../../engine/effects.js';
import { planTasks } from '../../engine/tasks/plan-tasks.js';
import { configFor, createCliOutput, repositoryRoot, type ProviderFlags } from '../context.js';
import { interruptOnSignals } from '../drive-run.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface PlanFlags extends ProviderFlags {
  out?: string;
  record?: string;
}

/** `ratchet tasks ...`: decompose a specification into tasks (seed 000's DECOMPOSE). */
export function registerTasksCommands(program: Command, _cli: CliSetup): void {
  const tasks = program
    .command('tasks')
    .description('Decompose a specification into tasks with dependencies (tasks plan)');

  addProviderOptions(
    tasks
      .command('plan')
      .description(
        'Ask the model to split a specification into tasks (key, goal, acceptance criteria, test and implementation file, dependencies, exports), validate them, and write the tasks file for you to review',
      )
      .argument('<spec>', 'the specification, a Markdown or text file'),
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
