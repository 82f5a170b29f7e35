import type { Command } from 'commander';
import { registerBenchCommands } from './bench-commands.js';
import type { CliSetup } from './cli-setup.js';
import { registerDemoCommand } from './demo-command.js';
import { registerDoctorCommand } from './doctor-command.js';
import { registerHistoryCommand } from './history-command.js';
import { registerInitCommand } from './init-command.js';
import { registerRefactorCommands } from './refactor-commands.js';
import { registerResumeCommand } from './resume-command.js';
import {
  registerDecisionCommands,
  registerReportCommand,
  registerRepairNotesCommand,
  registerRollbackCommand,
} from './run-commands.js';
import { registerSolveCommands } from './solve-commands.js';
import { registerStatusCommand } from './status-command.js';
import { registerTasksCommands } from './tasks-commands.js';
import { registerTddCommand } from './tdd-command.js';
import { registerWorkerCommand } from './worker-command.js';
import { registerTeamCommands } from './team-commands.js';
import { registerTeamUiCommand } from './team-ui-command.js';
import { registerTeamWorktreesCommands } from './team-worktrees-command.js';

/** Adds a command (or a group of them) to the program. */
type RegisterCommands = (program: Command, cli: CliSetup) => void;

/**
 * Every command, in the order `ratchet --help` lists them. The commands on runs (`resume`,
 * `status`, `history`, `rollback`, `accept`, `reject`, ...) serve every workflow through the
 * registry; a new workflow adds its own command file and one line here.
 */
export const COMMANDS: readonly RegisterCommands[] = [
  registerDemoCommand,
  registerInitCommand,
  registerDoctorCommand,
  // Workflows, then the commands on their runs.
  registerTddCommand,
  registerTasksCommands,
  registerWorkerCommand,
  registerResumeCommand,
  registerStatusCommand,
  registerHistoryCommand,
  registerReportCommand,
  registerRollbackCommand,
  registerDecisionCommands,
  registerRepairNotesCommand,
  registerRefactorCommands,
  registerSolveCommands,
  registerBenchCommands,
  registerTeamCommands,
  // After the team's own commands: these add theirs to the same `team` group.
  registerTeamWorktreesCommands,
  registerTeamUiCommand,
];
