import { WORKFLOWS } from '../workflows/index.js';
import { createWorkflowRegistry, type WorkflowRegistry } from './registry.js';

/** The registry of every workflow Ratchet ships (`src/workflows/index.ts`), all imported: the library's and the reports'. */
export function workflowRegistry(): WorkflowRegistry {
  return createWorkflowRegistry(WORKFLOWS);
}
