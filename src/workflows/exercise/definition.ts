import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { FRAMEWORKS } from '../../verify/detect.js';
import type { WorkflowDefinition } from '../definition.js';
import { exercisePrompts } from './prompts.js';
import { runExercise, type ExerciseResult } from './workflow.js';

/** A file of the exercise, by its path in the repository and its text. */
const ExerciseFileSchema = z.object({ path: z.string().min(1), content: z.string() });

/**
 * What an exercise run stores, and what starts one: the exercise (instructions, solution files),
 * the official tests withheld from the model while it works, how to run them, and which try it is.
 * The tests live here, not in the repository: the model's tools and shell see the worktree and
 * the repository's objects, never the run's settings (the ledger is in the protected checkout).
 */
const ExerciseSettingsSchema = z.object({
  exercise: z.string().optional(),
  language: z.string().optional(),
  instructions: z.string().optional(),
  solutionFiles: z.array(z.string()).optional(),
  tests: z.array(ExerciseFileSchema).optional(),
  testCommand: z.string().optional(),
  framework: z.enum(FRAMEWORKS).optional(),
  /** Which try this run is (from 1). */
  try: z.number().int().min(1).optional(),
  /** The first lines of the previous try's test output ('' on a first try). */
  feedback: z.string().optional(),
  feedbackLines: z.number().int().min(1).optional(),
  testTimeoutMs: z.number().int().min(1).optional(),
  /**
   * Grade only: no EXERCISE stage, no model call; the official tests run on the tree as it is
   * (`--mode tdd|solve` grade the work of their own runs with it, merged into the repository).
   */
  gradeOnly: z.boolean().optional(),
});
export type ExerciseSettings = z.infer<typeof ExerciseSettingsSchema>;

/** What starts an exercise run (`ratchet bench polyglot --mode direct` makes one per exercise). */
export type ExerciseRequest = Required<ExerciseSettings>;

interface ExerciseTypes {
  request: ExerciseRequest;
  checked: ExerciseRequest;
  settings: ExerciseSettings;
  prepared: undefined;
  state: undefined;
  result: ExerciseResult;
}

/**
 * One try at a benchmark exercise: one agent stage (`Stage: EXERCISE`), graded by the official
 * tests, which the run restores only after the model's turn and removes again (Aider's polyglot
 * protocol; `src/bench/polyglot/` runs one of these per try, each from the commit of the try
 * before). Its runs are not resumed: the benchmark runs an interrupted exercise again.
 */
export const exerciseWorkflow: WorkflowDefinition<ExerciseTypes> = {
  name: 'exercise',
  startCommand: 'ratchet bench polyglot <benchmark-dir>',
  settings: ExerciseSettingsSchema,
  modelStages: ['green'],
  plainDirectories: false,
  checkLoginFirst: false,
  feature: (request) => `${request.language}/${request.exercise}`,
  check(request) {
    if (request.solutionFiles.length === 0 || request.tests.length === 0) {
      throw new RatchetError('usage', `The exercise ${request.exercise} names no solution or no test file.`, {
        hint: 'Its .meta/config.json must list files.solution and files.test.',
      });
    }
    return Promise.resolve({ checked: request });
  },
  async preflight({ repoRoot }) {
    exercisePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot }));
  },
  settle: (checked) => Promise.resolve({ settings: checked, events: [] }),
  async *run(context) {
    const prompts = exercisePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot: context.run.repoRoot }));
    return yield* runExercise(context, prompts);
  },
  progress: { kind: 'checkpoints', noun: 'tries', counted: 'bench:' },
};
