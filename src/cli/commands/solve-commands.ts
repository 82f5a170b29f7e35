import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { RatchetError } from '../../core/errors.js';
import { parseRetrievalStages } from '../../context/retrieve.js';
import { startRun } from '../../engine/start-run.js';
import { readPlanArtifact, solveStatusOf, solveWorkflow } from '../../workflows/solve/definition.js';
import { planResultOf, planWorkflow } from '../../workflows/solve/plan-definition.js';
import { configFor, createCliOutput, repositoryRoot, startServices, type ProviderFlags } from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import { EXIT } from '../exit-codes.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface SolveFlags extends ProviderFlags {
  allowDirty?: boolean;
  record?: string;
  stages?: string;
  plan?: string;
  output?: string;
}

const STAGES_HELP =
  'retrieval stages of each pass, comma-separated: scope[,precision] (default from [solve] stages: scope,precision)';

async function readPlan(file: string): Promise<ReturnType<typeof readPlanArtifact>> {
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new RatchetError(
      'usage',
      `Cannot read the plan ${file}: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: 'Write one with ratchet plan "<task>" --output plan.json.',
      },
    );
  });
  return readPlanArtifact(text, file);
}

export function registerSolveCommands(program: Command, cli: CliSetup): void {
  addProviderOptions(
    program
      .command('solve')
      .description(
        'Make a planned multi-step change: META_PLAN -> PART_PLAN -> per step IMPLEMENT (search/replace edits, tests, retries) and ADJUSTMENT; each step a commit on branch ratchet/<run-id>',
      )
      .argument('<task...>', 'the task, in plain words'),
  )
    .option('--stages <list>', STAGES_HELP)
    .option('--plan <file>', 'execute a plan written by ratchet plan --output, in one pass')
    .option('--allow-dirty', 'start from HEAD even though the working tree has uncommitted changes')
    .addHelpText(
      'after',
      '\nExamples:\n  ratchet solve "fix the rounding in total() and add median()" --provider ollama --model qwen2.5-coder:3b\n  ratchet plan "add median()" --output plan.json && ratchet solve "add median()" --plan plan.json\n',
    )
    .action(async (task: string[], flags: SolveFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      const stages = flags.stages === undefined ? null : parseRetrievalStages(flags.stages);
      const plan = flags.plan === undefined ? null : await readPlan(resolve(flags.plan));
      const interrupt = interruptOnSignals();
      try {
        const run = startRun(
          solveWorkflow,
          {
            directory: repoRoot,
            request: { task: task.join(' '), stages, plan },
            config,
            allowDirty: Boolean(flags.allowDirty),
            ...(flags.plan === undefined ? {} : { inputs: [resolve(flags.plan)] }),
            signal: interrupt.signal,
            ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
          },
          startServices(),
        );
        const { code, outcome } = await driveRun(run, output, interrupt.bySigint);
        // A solve that made no step is a run that failed its gates, though the run itself completed.
        const exit = code === 0 && solveStatusOf(outcome.result) === 'failed' ? EXIT.gateFailed : code;
        if (code === 0 && !output.json) {
          output.out(
            `Review it: ${pc.cyan(`ratchet report ${outcome.runId} --trace`)}, then ${pc.cyan('ratchet accept')} to merge or ${pc.cyan('ratchet reject')} to drop it.`,
          );
        }
        cli.setExit(exit);
      } finally {
        interrupt.dispose();
      }
    });

  addProviderOptions(
    program
      .command('plan')
      .description('Plan a task without changing anything: the META_PLAN pass, written as a PlanArtifact (JSON)')
      .argument('<task...>', 'the task, in plain words'),
  )
    .option('--stages <list>', STAGES_HELP)
    .option('--output <file>', 'write the plan to this file (default: print it)')
    .option('--allow-dirty', 'plan from HEAD even though the working tree has uncommitted changes')
    .action(async (task: string[], flags: SolveFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const config = await configFor(repoRoot, flags);
      const stages = flags.stages === undefined ? null : parseRetrievalStages(flags.stages);
      const interrupt = interruptOnSignals();
      try {
        const run = startRun(
          planWorkflow,
          {
            directory: repoRoot,
            request: { task: task.join(' '), stages },
            config,
            allowDirty: Boolean(flags.allowDirty),
            signal: interrupt.signal,
            ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
          },
          startServices(),
        );
        const { code, outcome } = await driveRun(run, output, interrupt.bySigint);
        const result = planResultOf(outcome.result);
        if (code === 0 && result !== null) {
          const text = `${JSON.stringify(result.artifact, null, 2)}\n`;
          if (flags.output !== undefined) {
            await writeFile(resolve(flags.output), text);
            if (!output.json)
              output.out(
                `Plan written to ${pc.cyan(flags.output)}; execute it with ${pc.cyan(`ratchet solve "<task>" --plan ${flags.output}`)}.`,
              );
          } else if (!output.json) {
            output.out(text.trimEnd());
          }
          if (!output.json) {
            output.out(
              pc.dim(
                `The plan run changed nothing; ${`ratchet report ${outcome.runId} --trace`} shows its calls, ${`ratchet reject ${outcome.runId}`} removes its branch (its worktree is already gone).`,
              ),
            );
          }
        }
        cli.setExit(code);
      } finally {
        interrupt.dispose();
      }
    });
}
