import type { WorkflowRegistry } from '../../engine/registry.js';

/** What every command file gets when it registers its commands. */
export interface CliSetup {
  /** Sets the process's exit code (the CLI is the only place that maps outcomes to them). */
  setExit: (code: number) => void;
  /** The workflows the CLI knows: those of its workflow commands. */
  registry: WorkflowRegistry;
}
