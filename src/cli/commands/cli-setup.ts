import type { WorkflowRegistry } from '../../engine/registry.js';

/** What every command file gets when it registers its commands. */
export interface CliSetup {
  /** Sets the process's exit code (the CLI is the only place that maps outcomes to them). */
  setExit: (code: number) => void;
  /**
   * The workflows the CLI knows, imported when a command asks: those of `runs` (every one
   * without), so that `status` of a TDD run does not import the refactor workflow, say.
   */
  loadRegistry: (runs?: readonly { workflow: string }[]) => Promise<WorkflowRegistry>;
}
