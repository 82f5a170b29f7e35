import type { Command } from 'commander';
import { resolveRun } from '../../engine/run-lookup.js';
import type { GitRun } from '../../engine/git-run.js';
import type { Ledger } from '../../ledger/types.js';
import { createCliOutput, openExistingRepoLedger, repositoryRoot } from '../context.js';
import type { Output } from '../output.js';

/** What the commands on one run share: output, repository, ledger (closed on dispose) and the run. */
export interface RunSession extends AsyncDisposable {
  output: Output;
  repoRoot: string;
  ledger: Ledger;
  run: GitRun;
}

async function openRunSession(
  command: Command,
  runId: string | undefined,
  options: RunCommandOptions,
): Promise<RunSession> {
  const output = createCliOutput(command);
  const repoRoot = await repositoryRoot(command, runId);
  const ledger = await openExistingRepoLedger(repoRoot, runId);
  try {
    const run = await resolveRun(ledger, runId, options);
    return { output, repoRoot, ledger, run, [Symbol.asyncDispose]: () => ledger.close() };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}

/** `anyWorkflow`: the latest run may be a team iteration's (commands that only read it: history, report). */
interface RunCommandOptions {
  anyWorkflow?: boolean;
}

/**
 * Adds a command on one run (`[run]`, default the latest run): `body` gets the run's session,
 * which is closed after it, the run id as given and the command's flags.
 */
export function runCommand<Flags>(
  program: Command,
  name: string,
  description: string,
  body: (session: RunSession, runId: string | undefined, flags: Flags) => Promise<void>,
  options: RunCommandOptions = {},
): Command {
  return program
    .command(name)
    .description(description)
    .argument('[run]', 'run id (default: the latest run)')
    .action(async (runId: string | undefined, flags: Flags, command: Command) => {
      await using session = await openRunSession(command, runId, options);
      await body(session, runId, flags);
    });
}
