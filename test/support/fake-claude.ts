#!/usr/bin/env node
/**
 * A tiny stand-in for the `claude` executable, for the failure shapes the real CLI cannot be
 * made to produce on demand. Node runs it directly (type stripping: erasable syntax and
 * `node:` imports only). Behaviour is chosen by `FAKE_CLAUDE_MODE`:
 *
 * - `-v` always prints `2.1.330 (Claude Code)` (unless the mode is `garbage`).
 * - `success` prints a `success` result; `FAKE_CLAUDE_OUTPUT` (JSON) becomes `structured_output`.
 * - `garbage` prints an HTML error page on stdout and exits 0.
 * - `stderr` prints a usage error on stderr only and exits 1.
 * - `during-execution` prints an `error_during_execution` result and exits 1.
 * - `not-logged-in` prints the result the real CLI prints without credentials, and exits 1.
 * - `hang` starts a `sleep 600` child (in the same process group), writes `{"pid","child"}` to
 *   `FAKE_CLAUDE_PID_FILE`, and never finishes.
 *
 * When `FAKE_CLAUDE_LOG` is set, every invocation appends `{"argv","stdin","cwd","env"}` to it as
 * one JSON line (written before the mode's behaviour). `env` is the environment it was started
 * with, the values of names that look like credentials (`*KEY*`, `*TOKEN*`, `*SECRET*`,
 * `*PASSWORD*`) replaced by `[set]`, so the log never holds a key.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const mode = process.env.FAKE_CLAUDE_MODE ?? 'success';

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => (text += chunk));
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', () => resolve(text));
  });
}

function result(fields: Record<string, unknown>): string {
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 12,
    duration_api_ms: 5,
    num_turns: 1,
    session_id: sessionId(),
    total_cost_usd: 0.0021,
    usage: { input_tokens: 100, output_tokens: 20 },
    modelUsage: { 'claude-fake-1': { inputTokens: 100, outputTokens: 20, costUSD: 0.0021 } },
    permission_denials: [],
    ...fields,
  });
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;

function loggedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = SECRET_NAME.test(name) ? '[set]' : value;
  }
  return env;
}

function sessionId(): string {
  const index = argv.indexOf('--session-id');
  return index === -1 ? '00000000-0000-4000-8000-000000000000' : (argv[index + 1] ?? '');
}

async function main(): Promise<void> {
  const stdin = argv.includes('-v') ? '' : await readStdin();
  const log = process.env.FAKE_CLAUDE_LOG;
  if (log !== undefined) {
    appendFileSync(log, `${JSON.stringify({ argv, stdin, cwd: process.cwd(), env: loggedEnv() })}\n`);
  }

  if (argv.includes('-v') && mode !== 'garbage') {
    process.stdout.write('2.1.330 (Claude Code)\n');
    return;
  }
  switch (mode) {
    case 'success': {
      const output = process.env.FAKE_CLAUDE_OUTPUT;
      const structured = output === undefined ? {} : { structured_output: JSON.parse(output) as unknown };
      process.stdout.write(`${result({ result: output ?? 'done', ...structured })}\n`);
      return;
    }
    case 'garbage':
      process.stdout.write('<html><head><title>502 Bad Gateway</title></head><body>upstream failed</body></html>\n');
      return;
    case 'stderr':
      process.stderr.write("error: unknown option '--frobnicate'\n");
      process.exitCode = 1;
      return;
    case 'during-execution':
      process.stdout.write(
        `${result({ subtype: 'error_during_execution', is_error: true, errors: ['Tool execution crashed'] })}\n`,
      );
      process.exitCode = 1;
      return;
    case 'not-logged-in':
      process.stdout.write(
        `${result({ is_error: true, result: 'Not logged in · Please run /login', api_error_status: null, total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 }, terminal_reason: 'api_error' })}\n`,
      );
      process.exitCode = 1;
      return;
    case 'hang': {
      const child = spawn('sleep', ['600'], { stdio: 'ignore' });
      const file = process.env.FAKE_CLAUDE_PID_FILE;
      if (file !== undefined) writeFileSync(file, JSON.stringify({ pid: process.pid, child: child.pid }));
      setInterval(() => undefined, 60_000);
      return;
    }
    default:
      process.stderr.write(`fake-claude: unknown FAKE_CLAUDE_MODE '${mode}'\n`);
      process.exitCode = 2;
  }
}

await main();
