import type { AnyWorkflow } from './definition.js';
import { exerciseWorkflow } from './exercise/definition.js';
import { refactorWorkflow } from './refactor/definition.js';
import { planWorkflow } from './solve/plan-definition.js';
import { solveWorkflow } from './solve/definition.js';
import { tasksWorkflow } from './tasks/definition.js';
import { tddWorkflow } from './tdd/definition.js';

/**
 * Every workflow Ratchet ships, in the order `ratchet --help` lists their commands. The engine's
 * registry (`workflowRegistry`), the CLI and the library read this list and no other: a new
 * workflow adds its folder and one line here (and its command file to the CLI's list).
 */
export const WORKFLOWS: readonly AnyWorkflow[] = [
  tddWorkflow,
  tasksWorkflow,
  refactorWorkflow,
  solveWorkflow,
  planWorkflow,
  exerciseWorkflow,
];
