import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { detectTestCommand, FRAMEWORKS } from '../../verify/detect.js';
import type { WorkflowDefinition } from '../definition.js';
import { checkTask, solveDependencies, type SolveRequest } from './definition.js';
import { solvePrompts } from './prompts.js';
import { PlanArtifactSchema, type PlanArtifact } from './schemas.js';
import { planTask } from './workflow.js';

/** The retrieval stages, and the test command `solve --plan` will verify with (checked now, as solve does). */
const PlanSettingsSchema = z.object({
  stages: z.array(z.enum(['scope', 'precision'])).optional(),
  testCommand: z.string(),
  framework: z.enum(FRAMEWORKS),
});
type PlanSettings = z.infer<typeof PlanSettingsSchema>;

/** What a plan run returns: the artifact, and where the run kept it. */
export interface PlanResult {
  artifact: PlanArtifact;
  file: string;
}

const PlanResultSchema = z.object({ artifact: PlanArtifactSchema, file: z.string() });

/** A plan run's result as the engine hands it back (`RunOutcome.result`, untyped there); null when it has none. */
export function planResultOf(result: unknown): PlanResult | null {
  return PlanResultSchema.safeParse(result).data ?? null;
}

interface PlanTypes {
  request: Omit<SolveRequest, 'plan'>;
  checked: PlanSettings;
  settings: PlanSettings;
  prepared: undefined;
  state: never;
  result: PlanResult;
}

/**
 * `ratchet plan "<task>"` (seed 004, `cra plan`): the META_PLAN pass alone, as a run so that its
 * calls are recorded and traced like a solve's (`ratchet report <run> --trace`). It changes no
 * file: its branch has no commit, and the PlanArtifact is kept in the run's folder
 * (`plan.json`), from where the CLI writes `--output`. Not resumed: a plan is made again.
 */
export const planWorkflow: WorkflowDefinition<PlanTypes> = {
  name: 'plan',
  startCommand: 'ratchet plan "<task>"',
  settings: PlanSettingsSchema,
  modelStages: ['plan'],
  plainDirectories: false,
  checkLoginFirst: false,
  // Nothing is written in the worktree: it goes when the plan is made (the branch stays for `reject`).
  releasesWorktree: true,
  feature: (request) => request.task,
  async check(request, { repoRoot, config }) {
    checkTask(request.task, config);
    const test = await detectTestCommand(repoRoot, config.test.command);
    return {
      checked: { stages: request.stages ?? config.solve.stages, testCommand: test.command, framework: test.framework },
    };
  },
  async preflight({ repoRoot }) {
    solvePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot }));
  },
  settle: (checked) => Promise.resolve({ settings: checked, events: [] }),
  progress: {
    kind: 'own',
    lines: (run) =>
      Promise.resolve([
        ['plan', `${relative(process.cwd(), join(run.runDir, 'plan.json'))} (ratchet report ${run.id} --trace)`],
      ]),
  },
  async *run(context) {
    const { run, config, settings } = context;
    // No test runs while planning (the ports are shared with solve).
    const deps = await solveDependencies(context, { command: settings.testCommand, framework: settings.framework });
    const artifact = yield* planTask(
      {
        task: run.feature,
        runId: run.id,
        baseCommit: run.baseCommit,
        stages: settings.stages ?? config.solve.stages,
        maxRetriesPerStep: config.solve.maxRetriesPerStep,
        maxFullFiles: config.solve.maxFullFiles,
        context: config.solve.context,
      },
      deps,
      context.signal,
    );
    await mkdir(context.runDir, { recursive: true });
    const file = join(context.runDir, 'plan.json');
    await writeFile(file, `${JSON.stringify(artifact, null, 2)}\n`);
    yield { type: 'log', message: `Plan kept in ${file}` };
    return { artifact, file };
  },
};
