import { RatchetError } from '../core/errors.js';
import type { AnyWorkflow } from '../workflows/definition.js';
import { WORKFLOW_LOADERS } from '../workflows/loaders.js';

/**
 * The workflows the engine knows, by the name their runs are recorded under. The engine finds a
 * recorded run's definition here and never branches on a workflow's name.
 */
export interface WorkflowRegistry {
  readonly workflows: readonly AnyWorkflow[];
  /** The definition of a recorded run's workflow; throws (`internal`) for a name nobody registered. */
  of(run: { id: string; workflow: string }): AnyWorkflow;
}

/** A registry of `workflows`; `known` names every workflow there is (for the hint of a refusal). */
export function createWorkflowRegistry(
  workflows: readonly AnyWorkflow[],
  known: readonly string[] = workflows.map((workflow) => workflow.name),
): WorkflowRegistry {
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
            hint: `Known workflows: ${known.join(', ')}. Use the Ratchet version that started the run.`,
          },
        );
      }
      return workflow;
    },
  };
}

/**
 * A registry of the workflows Ratchet ships (`src/workflows/loaders.ts`) that holds those of
 * `runs` (every one without `runs`), each definition imported now: the CLI's, which loads only
 * what the command at hand uses. A run of a workflow nobody ships is refused by `of`.
 */
export async function loadWorkflowRegistry(runs?: readonly { workflow: string }[]): Promise<WorkflowRegistry> {
  const known = Object.keys(WORKFLOW_LOADERS);
  const names = runs === undefined ? known : [...new Set(runs.map((run) => run.workflow))];
  const workflows = await Promise.all(names.flatMap((name) => WORKFLOW_LOADERS[name]?.() ?? []));
  return createWorkflowRegistry(workflows, known);
}
