import { Help, type Command } from 'commander';
import type { CliSetup } from './cli-setup.js';
import { COMMANDS } from './index.js';

/**
 * The top-level command a command line names (`ratchet --cwd x status` -> `status`;
 * `ratchet help tdd` -> `tdd`), undefined when it names none. The program's options are skipped
 * with their values, as commander parses them.
 */
export function commandWord(program: Command, args: readonly string[]): string | undefined {
  let help = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--') return args[index + 1];
    if (arg.startsWith('-')) {
      const option = program.options.find((candidate) => candidate.long === arg || candidate.short === arg);
      // `--cwd <dir>`: its value is not a command (`--cwd=<dir>` is one word).
      if (option?.required || option?.optional) index++;
      continue;
    }
    if (arg === 'help' && !help) {
      help = true;
      continue;
    }
    return arg;
  }
  return help ? 'help' : undefined;
}

function nameOf(term: string): string {
  return term.split(' ')[0] ?? term;
}

/**
 * Adds every command to the program. The files of the command the line names are imported and
 * register it in full (its options, subcommands, help and action); every other command is a stub
 * with the name and description `ratchet --help` lists, so start-up imports no command's
 * implementation, nor the engine, the ledger or the workflows unless the command runs.
 */
export async function registerCommands(
  program: Command,
  args: readonly string[],
  setExit: (code: number) => void,
): Promise<void> {
  const word = commandWord(program, args);
  const chosen = COMMANDS.filter((files) => files.commands.some(({ term }) => nameOf(term) === word));
  // A stub lists the term its files' command has (`tdd [options] <feature...>`); a stub has none
  // of their options or arguments to compute it from.
  const stubTerms = new Map<Command, string>();
  const help = program.configureHelp();
  program.configureHelp({
    ...help,
    subcommandTerm(this: Help, command: Command): string {
      return stubTerms.get(command) ?? Help.prototype.subcommandTerm.call(this, command);
    },
  });
  const cli: CliSetup = {
    setExit,
    loadRegistry: async (runs) => (await import('../../engine/registry.js')).loadWorkflowRegistry(runs),
  };
  for (const files of COMMANDS) {
    if (chosen.includes(files)) {
      for (const register of await files.load()) register(program, cli);
      continue;
    }
    for (const { term, description } of files.commands) {
      stubTerms.set(program.command(nameOf(term)).description(description), term);
    }
  }
}
