import type { Command } from 'commander';
import { findRun, resolveRun } from '../../engine/run-lookup.js';
import type { GitRun } from '../../engine/git-run.js';
import type { Ledger, RunRow } from '../../ledger/types.js';
import { createCliOutput, openExistingRepoLedger, repositoryRoot } from '../context.js';
import type { Output } from '../output.js';

/** What the commands on one run share: output, repository, ledger (closed on dispose) and the run. */
export interface RunSession<Run extends RunRow = GitRun> extends AsyncDisposable {
  output: Output;
  repoRoot: string;
  ledger: Ledger;
  run: Run;
}

async function openRunSession<Run extends RunRow>(
  command: Command,
  runId: string | undefined,
  find: (ledger: Ledger, runId: string | undefined) => Promise<Run>,
): Promise<RunSession<Run>> {
  const output = createCliOutput(command);
  const repoRoot = await repositoryRoot(command, runId);
  const ledger = await openExistingRepoLedger(repoRoot, runId);
  try {
    const run = await find(ledger, runId);
    return { output, repoRoot, ledger, run, [Symbol.asyncDispose]: () => ledger.close() };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}

function addRunCommand<Run extends RunRow, Flags>(
  program: Command,
  name: string,
  description: string,
  find: (ledger: Ledger, runId: string | undefined) => Promise<Run>,
  body: (session: RunSession<Run>, runId: string | undefined, flags: Flags) => Promise<void>,
): Command {
  return program
    .command(name)
    .description(description)
    .argument('[run]', 'run id (default: the latest run)')
    .action(async (runId: string | undefined, flags: Flags, command: Command) => {
      await using session = await openRunSession(command, runId, find);
      await body(session, runId, flags);
    });
}

/**
 * Adds a command on one run of the lifecycle (`[run]`, default the latest run that is not a team
 * iteration's): `body` gets the run's session, which is closed after it, the run id as given and
 * the command's flags. The run has its branch, base commit and worktree.
 */
export function runCommand<Flags>(
  program: Command,
  name: string,
  description: string,
  body: (session: RunSession, runId: string | undefined, flags: Flags) => Promise<void>,
): Command {
  return addRunCommand(program, name, description, (ledger, runId) => resolveRun(ledger, runId), body);
}

/**
 * Adds a command that only reads a run (`history`, `report`): any run of the ledger, a team
 * iteration's included, and one with no branch, base commit or worktree (a run that never made
 * them), which the body shows without its git fields.
 */
export function readRunCommand<Flags>(
  program: Command,
  name: string,
  description: string,
  body: (session: RunSession<RunRow>, runId: string | undefined, flags: Flags) => Promise<void>,
): Command {
  return addRunCommand(
    program,
    name,
    description,
    (ledger, runId) => findRun(ledger, runId, { anyWorkflow: true }),
    body,
  );
}
