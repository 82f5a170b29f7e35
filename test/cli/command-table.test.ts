/**
 * The CLI's command table (`src/cli/commands/index.ts`): `ratchet` imports only the files of the
 * command it runs and lists the others from their summaries, so each summary must say what its
 * files register, and the program `ratchet --help` shows must be the one every file would build.
 */
import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { commandWord, registerCommands } from '../../src/cli/commands/register-commands.js';
import { loadWorkflowRegistry } from '../../src/engine/registry.js';

/** A root program with the options `ratchet` has (they decide which word is the command). */
function root(): Command {
  return new Command('ratchet')
    .option('--cwd <dir>', 'the repository')
    .option('--json', 'NDJSON')
    .option('-y, --yes', 'yes')
    .configureHelp({ showGlobalOptions: true });
}

/** The program with every command file imported and registered. */
async function everyFileRegistered(): Promise<Command> {
  const program = root();
  const cli = { setExit: () => undefined, loadRegistry: loadWorkflowRegistry };
  for (const files of COMMANDS) for (const register of await files.load()) register(program, cli);
  return program;
}

describe('the command table', () => {
  it("lists each top-level command with the term and description its files register, in the files' order", async () => {
    const help = new Help();
    for (const files of COMMANDS) {
      const program = root();
      const cli = { setExit: () => undefined, loadRegistry: loadWorkflowRegistry };
      for (const register of await files.load()) register(program, cli);
      expect(
        program.commands.map((command) => ({ term: help.subcommandTerm(command), description: command.description() })),
      ).toEqual(files.commands);
    }
  });

  it('`ratchet --help` without the command files is the help with all of them', async () => {
    const lazy = root();
    await registerCommands(lazy, ['--help'], () => undefined);
    const full = await everyFileRegistered();
    expect(lazy.helpInformation()).toBe(full.helpInformation());
    // Not one of them was a full command: the help came from the summaries.
    expect(lazy.commands.every((command) => command.options.length === 0 && command.commands.length === 0)).toBe(true);
  });

  it('registers the named command in full and only summaries of the others', async () => {
    const program = root();
    await registerCommands(program, ['--cwd', 'status', 'refactor', 'run', '--help'], () => undefined);
    const refactor = program.commands.find((command) => command.name() === 'refactor');
    expect(refactor?.commands.map((command) => command.name())).toContain('run');
    // `index` comes from the same file as `refactor`: registered with it, with its options.
    expect(program.commands.find((command) => command.name() === 'index')?.options.length).toBeGreaterThan(0);
    expect(program.commands.find((command) => command.name() === 'tdd')?.options).toEqual([]);
    expect(program.commands.map((command) => command.name())).toEqual(
      (await everyFileRegistered()).commands.map((command) => command.name()),
    );
  });

  it('finds the command word past the options and their values, and behind `help`', () => {
    const program = root();
    expect(commandWord(program, ['--cwd', 'status', '--json', 'history'])).toBe('history');
    expect(commandWord(program, ['--cwd=x', '-y', 'tdd', 'status'])).toBe('tdd');
    expect(commandWord(program, ['help', 'refactor'])).toBe('refactor');
    expect(commandWord(program, ['help'])).toBe('help');
    expect(commandWord(program, ['--json', '--version'])).toBeUndefined();
  });
});
