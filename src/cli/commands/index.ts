import type { Command } from 'commander';
import type { CliSetup } from './cli-setup.js';

/** Adds a command (or a group of them) to the program. */
type RegisterCommands = (program: Command, cli: CliSetup) => void;

/** A top-level command as `ratchet --help` lists it: its term (name, `[options]`, arguments) and its description. */
interface CommandSummary {
  term: string;
  description: string;
}

/**
 * Command files and the top-level commands they add. Only the summaries are read at start-up:
 * the files (and through them the engine, the ledger, the AI SDK, the workflows...) are imported
 * when one of their commands runs or shows its help, so `ratchet --version`, `ratchet --help` and
 * each command load only what they use (`register-commands.ts`). test/cli/command-table.test.ts
 * checks that the summaries say what the files register.
 */
interface CommandFiles {
  commands: readonly CommandSummary[];
  load: () => Promise<readonly RegisterCommands[]>;
}

/**
 * Every command, in the order `ratchet --help` lists them. The commands on runs (`resume`,
 * `status`, `history`, `rollback`, `accept`, `reject`, ...) serve every workflow through the
 * registry; a new workflow adds its own command file and one entry here.
 */
export const COMMANDS: readonly CommandFiles[] = [
  {
    commands: [
      {
        term: 'demo [options]',
        description:
          'Run the full TDD loop on a bundled kata with a scripted model (no API key needed): real git, real tests, real ledger',
      },
    ],
    load: async () => [(await import('./demo-command.js')).registerDemoCommand],
  },
  {
    commands: [
      {
        term: 'init [options]',
        description:
          'Write .ratchet/config.toml for this repository (detects the test command) and keep .ratchet/ out of git',
      },
    ],
    load: async () => [(await import('./init-command.js')).registerInitCommand],
  },
  {
    commands: [
      {
        term: 'doctor [options]',
        description:
          'Check git, the test command and its baseline, the provider, its endpoint and key (by listing its models: no tokens spent); each problem with a fix',
      },
    ],
    load: async () => [(await import('./doctor-command.js')).registerDoctorCommand],
  },
  // Workflows, then the commands on their runs.
  {
    commands: [
      {
        term: 'tdd [options] <feature...>',
        description:
          'Build a feature test-first: PLAN -> RED -> GREEN -> REFACTOR cycles over test-list.md, each accepted stage a commit on branch ratchet/<run-id>',
      },
    ],
    load: async () => [(await import('./tdd-command.js')).registerTddCommand],
  },
  {
    commands: [
      {
        term: 'tasks',
        description: 'Decompose a specification into tasks (tasks plan) and run them in a pool of workers (tasks run)',
      },
    ],
    load: async () => [(await import('./tasks-commands.js')).registerTasksCommands],
  },
  {
    commands: [
      {
        term: 'worker [options]',
        description:
          "Take the tasks of `ratchet tasks run --queue` from Redis and run them on this machine: each task's TDD pipeline in a worktree under this machine's $RATCHET_HOME, sandboxed, with this machine's provider, model and keys (keys never cross the queue); its events go back to the run's ledger, its branch is pushed to the repository the run published. It must reach Redis and that repository. Ctrl-C (or SIGTERM) stops taking jobs and lets the running ones finish; a second one quits at once, and the jobs it ran go to another worker.",
      },
    ],
    load: async () => [(await import('./worker-command.js')).registerWorkerCommand],
  },
  {
    commands: [
      {
        term: 'resume [options] [run]',
        description: 'Continue a run from its last checkpoint (after a failure, SIGINT, a crash or kill -9)',
      },
    ],
    load: async () => [(await import('./resume-command.js')).registerResumeCommand],
  },
  {
    commands: [
      {
        term: 'status [run]',
        description: 'Show the state of a run: phase, cycle, current test (or committed batches), progress, cost',
      },
    ],
    load: async () => [(await import('./status-command.js')).registerStatusCommand],
  },
  {
    commands: [
      {
        term: 'history [run]',
        description: 'List the runs of this repository and the checkpoints of one run (with their handoff notes)',
      },
    ],
    load: async () => [(await import('./history-command.js')).registerHistoryCommand],
  },
  {
    commands: [
      {
        term: 'report [options] [run]',
        description: 'Write the run report (Markdown and self-contained HTML) under .ratchet/runs/<run-id>/',
      },
    ],
    load: async () => [(await import('./run-commands.js')).registerReportCommand],
  },
  {
    commands: [
      {
        term: 'rollback [options] <target>',
        description:
          'Move a run back to one of its checkpoints (a commit listed by `ratchet history`), or to its start with the run id; then `ratchet resume` (tdd) or `ratchet accept --force` (refactor)',
      },
    ],
    load: async () => [(await import('./run-commands.js')).registerRollbackCommand],
  },
  {
    commands: [
      {
        term: 'accept [options] [run]',
        description:
          'Merge a finished run into the branch it started from (fast-forward when possible) and remove its worktree',
      },
      {
        term: 'reject [run]',
        description: 'Drop a run: remove its worktree and branch (your checkout was never touched)',
      },
    ],
    load: async () => [(await import('./run-commands.js')).registerDecisionCommands],
  },
  {
    commands: [
      {
        term: 'repair-notes [run]',
        description: 'Repair the handoff notes (refs/notes/tdd-handoffs) of a run from the ledger',
      },
    ],
    load: async () => [(await import('./run-commands.js')).registerRepairNotesCommand],
  },
  {
    commands: [
      {
        term: 'refactor',
        description:
          'Whole-repository refactoring in small verified batches: baseline, index, risk-ordered plan, patches, checkpoints, report',
      },
      {
        term: 'index [options] [repo]',
        description:
          'Build or update the code index (.ratchet/index; for a directory outside git, under $RATCHET_HOME/index) and print its summary',
      },
    ],
    load: async () => [(await import('./refactor-commands.js')).registerRefactorCommands],
  },
  {
    commands: [
      {
        term: 'solve [options] <task...>',
        description:
          'Make a planned multi-step change: META_PLAN -> PART_PLAN -> per step IMPLEMENT (search/replace edits, tests, retries) and ADJUSTMENT; each step a commit on branch ratchet/<run-id>',
      },
      {
        term: 'plan [options] <task...>',
        description: 'Plan a task without changing anything: the META_PLAN pass, written as a PlanArtifact (JSON)',
      },
    ],
    load: async () => [(await import('./solve-commands.js')).registerSolveCommands],
  },
  {
    commands: [
      {
        term: 'bench',
        description: 'Measure a model through Ratchet on a public benchmark (not `npm run bench`, the project’s own)',
      },
    ],
    load: async () => [(await import('./bench-commands.js')).registerBenchCommands],
  },
  {
    commands: [
      {
        term: 'team',
        description:
          'A team of agents and a coach talking an iteration through refinement, planning, reviews and implementation',
      },
    ],
    // The team's own commands first: `team worktrees` and `team ui` add theirs to the same group.
    load: async () => [
      (await import('./team-commands.js')).registerTeamCommands,
      (await import('./team-worktrees-command.js')).registerTeamWorktreesCommands,
      (await import('./team-ui-command.js')).registerTeamUiCommand,
    ],
  },
];
