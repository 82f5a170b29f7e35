#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import pc from 'picocolors';
import { toRatchetError } from '../core/errors.js';
import { createRedactor, redactValue, secretsFromEnv } from '../core/redact.js';
import { escapeJsonControl, stripControl } from './terminal-text.js';
import { exitCodeFor, EXIT } from './exit-codes.js';
import { registerCommands } from './commands/register-commands.js';

function version(): string {
  // `../../package.json` from `dist/bundle/` (and `dist/cli/`, `src/cli/`): the package's own, read without the
  // config layer (zod, TOML) that `ratchet --version` does not need.
  const parsed: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string'
    ? parsed.version
    : '0.0.0';
}

// A reader that went away (`ratchet history | head`) is not an error: stop quietly, as the
// usual command-line tools do, instead of an unhandled EPIPE with a stack trace. A run in
// progress keeps its checkpoints; `ratchet resume` continues it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.ok);
    throw error;
  });
}

// The AI SDK reports warnings (e.g. an unrecognised model id) on stderr; Ratchet reports its own.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const setExit = (code: number): void => {
    exitCode = code;
  };
  const ratchetVersion = version();
  const json = argv.includes('--json');
  const program = new Command('ratchet')
    .description(
      'Test-gated workflows for LLM coding agents. The model proposes; Ratchet disposes: every change lands in an isolated git worktree, is verified by your own tests, checkpointed, recorded and reversible.',
    )
    .version(ratchetVersion)
    // `ratchet --json --version` is JSON like every other --json output.
    .configureOutput({
      writeOut: (text) =>
        process.stdout.write(
          json && text === `${ratchetVersion}\n` ? `${JSON.stringify({ version: ratchetVersion })}\n` : text,
        ),
    })
    .option('--cwd <dir>', 'the repository to work on (default: TDD_PROJECT_ROOT or the current directory)')
    .option('--json', 'machine-readable output (NDJSON)')
    .option('-y, --yes', 'answer yes to every confirmation')
    // A script reading --json gets the error as JSON (below), not the help text.
    .showHelpAfterError(!json)
    // `ratchet status --help` shows --json, --cwd and --yes too: every command takes them.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .addHelpText(
      'after',
      `
Quick start:
  ratchet demo                                  the whole loop on a bundled kata, no key needed
  ratchet init && ratchet doctor                set up a repository
  ratchet tdd "Add a stack with push, pop and peek" --provider anthropic --model claude-sonnet-4-5

Exit codes: 0 done, 1 gates failed, 2 usage/config, 3 provider/auth, 4 interrupted, 130 SIGINT.
Environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL, OLLAMA_HOST,
  TDD_MODEL, TDD_MAX_RETRIES, TDD_PROJECT_ROOT, RATCHET_HOME.`,
    );
  try {
    await registerCommands(program, argv.slice(2), setExit);
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return EXIT.ok;
      // Commander has said it on stderr (with the help); a script reading --json gets it too.
      // A command group without its subcommand (`ratchet`, `ratchet refactor`) shows its help.
      const message =
        error.code === 'commander.help' ? missingCommand(program, argv) : error.message.replace(/^error: /, '');
      if (json)
        process.stdout.write(
          `${JSON.stringify({ type: 'error', code: 'usage', message, hint: 'See `ratchet --help` or `ratchet <command> --help`.' })}\n`,
        );
      return EXIT.usage;
    }
    const failure = toRatchetError(error);
    if (json)
      process.stdout.write(
        `${escapeJsonControl(JSON.stringify(redactValue({ type: 'error', code: failure.code, message: failure.message, hint: failure.hint ?? null }, createRedactor(secretsFromEnv(process.env)))))}\n`,
      );
    else {
      // An error can quote a command's output or a test name: no key, no control sequence.
      const redact = createRedactor(secretsFromEnv(process.env), { shapes: 'keys' });
      const shown = (text: string): string => stripControl(redact(text));
      process.stderr.write(`${pc.red(`error: ${shown(failure.message)}`)}\n`);
      if (failure.hint) process.stderr.write(`${pc.dim(`hint: ${shown(failure.hint)}`)}\n`);
      if (failure.code === 'internal' && failure.cause instanceof Error && failure.cause.stack)
        process.stderr.write(`${pc.dim(shown(failure.cause.stack))}\n`);
    }
    return exitCodeFor(failure.code, false);
  }
}

/** What `ratchet` or `ratchet refactor` alone lacks: "ratchet refactor needs a command: run, plan, ...". */
function missingCommand(program: Command, argv: readonly string[]): string {
  let current = program;
  const names = [program.name()];
  for (const arg of argv.slice(2)) {
    const sub = arg.startsWith('-') ? undefined : current.commands.find((command) => command.name() === arg);
    if (sub === undefined) continue;
    current = sub;
    names.push(sub.name());
  }
  const choices = current.commands.map((command) => command.name()).filter((name) => name !== 'help');
  return `${names.join(' ')} needs a command: ${choices.join(', ')}`;
}

process.exitCode = await main(process.argv);
