import type { AnyWorkflow } from './definition.js';

/**
 * Each workflow Ratchet ships, by the name its runs are recorded under, imported when asked for:
 * the CLI loads only the workflow of the run a command is about (`loadWorkflowRegistry`), not
 * every definition and what they import. The same workflows as `WORKFLOWS` (`index.ts`), which
 * test/cli/workflow-commands.test.ts checks; a new workflow adds a line to both.
 */
export const WORKFLOW_LOADERS: Readonly<Record<string, () => Promise<AnyWorkflow>>> = {
  tdd: async () => (await import('./tdd/definition.js')).tddWorkflow,
  tasks: async () => (await import('./tasks/definition.js')).tasksWorkflow,
  refactor: async () => (await import('./refactor/definition.js')).refactorWorkflow,
  solve: async () => (await import('./solve/definition.js')).solveWorkflow,
  plan: async () => (await import('./solve/plan-definition.js')).planWorkflow,
  exercise: async () => (await import('./exercise/definition.js')).exerciseWorkflow,
};
