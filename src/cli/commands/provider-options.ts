import type { Command } from 'commander';

/**
 * The options that choose the run's models and how its commands run: declared once, for every
 * command that runs a workflow. A command that only calls a model (`tasks plan`) runs no command,
 * so it offers no `--no-sandbox` (`sandbox: false`), and names only the providers it takes.
 */
export function addProviderOptions(command: Command, options: { sandbox?: boolean; providers?: string } = {}): Command {
  command
    .option(
      '--provider <name>',
      options.providers ?? 'anthropic | openai | openai-compatible | ollama | claude-code | replay',
    )
    .option('--model <id>', 'model id, passed to the provider exactly as given')
    .option('--base-url <url>', 'provider endpoint (Anthropic: without /v1; OpenAI-compatible: with /v1)')
    .option('--cassette <file>', 'NDJSON cassette for --provider replay')
    .option('--record <file>', 'append every model call to this cassette (replay it later with --provider replay)');
  if (options.sandbox === false) return command;
  return command.option(
    '--no-sandbox',
    'run the model\'s commands and the tests without the bubblewrap sandbox, with your rights (as [bash] sandbox = "off")',
  );
}
