import type { AnyWorkflow } from './definition.js';
import { exerciseWorkflow } from './exercise/definition.js';
import { refactorWorkflow } from './refactor/definition.js';
import { planWorkflow } from './solve/plan-definition.js';
import { solveWorkflow } from './solve/definition.js';
import { tasksWorkflow } from './tasks/definition.js';
import { tddWorkflow } from './tdd/definition.js';

/**
 * Every workflow Ratchet ships, in the order `ratchet --help` lists their commands. The library's
 * registry (`workflowRegistry`) and the reports read this list; the CLI imports each definition
 * when a command needs it (`loaders.ts`). A new workflow adds its folder and one line here and in
 * `loaders.ts` (and its command file to the CLI's list).
 */
export const WORKFLOWS: readonly AnyWorkflow[] = [
  tddWorkflow,
  tasksWorkflow,
  refactorWorkflow,
  solveWorkflow,
  planWorkflow,
  exerciseWorkflow,
];
