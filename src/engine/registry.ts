import { RatchetError } from '../core/errors.js';
import type { AnyWorkflow } from '../workflows/definition.js';

/**
 * The workflows the engine knows, by the name their runs are recorded under. The engine finds a
 * recorded run's definition here and never branches on a workflow's name.
 */
export interface WorkflowRegistry {
  readonly workflows: readonly AnyWorkflow[];
  /** The definition of a recorded run's workflow; throws (`internal`) for a name nobody registered. */
  of(run: { id: string; workflow: string }): AnyWorkflow;
}

export function createWorkflowRegistry(workflows: readonly AnyWorkflow[]): WorkflowRegistry {
  const byName = new Map(workflows.map((workflow) => [workflow.name, workflow]));
  return {
    workflows,
    of(run) {
      const workflow = byName.get(run.workflow);
      if (workflow === undefined) {
        throw new RatchetError(
          'internal',
          `Run ${run.id} is a ${run.workflow} run, a workflow this Ratchet does not know.`,
          {
            hint: `Known workflows: ${[...byName.keys()].join(', ')}. Use the Ratchet version that started the run.`,
          },
        );
      }
      return workflow;
    },
  };
}
