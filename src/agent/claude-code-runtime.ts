import type { AgentRuntime, StageOutcome, StageRequest } from '../core/agent.js';
import { RatchetError, throwIfAborted, toRatchetError } from '../core/errors.js';
import type { FinishReason, ModelRequest, ModelResponse, TokenUsage } from '../core/model.js';
import { writePromptFile } from './claude-code/prompt-file.js';
import { apiFailureOf, errorsText, type ClaudeResult } from './claude-code/result.js';
import { runClaude, withBaseUrl, type ClaudeProcessOptions } from './claude-code/run-claude.js';
import { createStructuredOutput, type StructuredOutput } from './structured-output.js';

export { checkClaudeAuth, checkClaudeCode } from './claude-code/checks.js';

/** Dependencies and settings of the Claude Code runtime, all injected. */
export interface ClaudeCodeRuntimeOptions extends ClaudeProcessOptions {
  /** `--model`; the CLI's default model when absent. */
  model?: string;
  /** `--allowedTools`, e.g. `Read,Edit,Bash,Grep,Glob`: tools the CLI may use without asking. */
  allowedTools: string;
  /**
   * `--tools`: the built-in tools the CLI offers the model at all (default: the allowed tools).
   * Without it the model also sees Write, Agent, WebFetch and the rest, only to be refused.
   */
  tools?: string;
  /** `--base-url`: the CLI's `ANTHROPIC_BASE_URL`, without `/v1` (the CLI adds it). */
  baseUrl?: string;
  /** Where the content-addressed system prompt files are written. */
  promptDir: string;
  /** Kill the CLI (its whole process group) after this many ms, per call. */
  timeoutMs: number;
  /** Fresh UUIDs for `--session-id` (one per call). */
  uuid: () => string;
  /** Milliseconds clock, for the latency of calls that end without a result (default `Date.now`). */
  now?: () => number;
}

const PROVIDER = 'claude-code';

/** Calls per stage when the structured output fails local validation: the first and one retry. */
const MAX_CALLS = 2;

/** Running totals of one stage over its CLI calls. */
interface Totals {
  turns: number;
  usage: TokenUsage;
  costUsd: number;
}

/** What one CLI result means for the stage. */
type Verdict<T> =
  | { kind: 'completed'; output: T | undefined }
  | { kind: 'stop'; status: 'turn-limit' | 'invalid-output'; message: string }
  /** The structured output failed our own (zod) validation: worth one fresh call. */
  | { kind: 'retry'; problem: string };

/**
 * The `claude-code` agent runtime: each stage is one headless Claude Code CLI call
 * (seed 002, sections 14 and 21), with the CLI running its own tool loop in the worktree:
 *
 * `claude -p --output-format json [--json-schema <schema>] --system-prompt-file <file>
 *  --tools <tools> --allowedTools <tools> --restricted --max-turns <n> --session-id <fresh uuid>
 *  [--model <model>]`
 *
 * - The prompt goes to the CLI's stdin (`-p` without a prompt argument reads it there): a
 *   prompt starting with `-` would otherwise be taken for an option, and a single argument is
 *   limited to 128 KiB on Linux.
 * - The system prompt is written to `<promptDir>/<stage>-<sha256 prefix>.txt`, so every
 *   version of a prompt has its own file.
 * - Every call gets a fresh `--session-id`; `--continue` / `--resume` are never used.
 * - `--restricted` confines the CLI's file tools (Read, Grep, Glob, Edit, Write) to the working
 *   directory, the worktree, even where the allowed tools approve them, and makes it ignore the
 *   user, project and local settings files (a file a tool wrote cannot widen its permissions):
 *   the second layer under the sandbox, which `createClaudeRunner` provides.
 * - With an `outputSchema`, its JSON Schema goes to `--json-schema` (non-object schemas wrapped
 *   as `{ value }`, as for the built-in runtime); the CLI offers the model a `StructuredOutput`
 *   tool and ends the run on a call that matches.
 *
 * Results map to outcomes: `success` with a `structured_output` that passes the zod schema ->
 * `completed`; `success` without `structured_output` although a schema was given ->
 * `invalid-output` (the CLI already insisted once); a `structured_output` that fails the zod
 * schema (refinements JSON Schema cannot express) -> one more call with a fresh session and the
 * problem appended to the prompt, then `invalid-output`; `error_max_structured_output_retries`
 * -> `invalid-output`; `error_max_turns` and `error_max_budget_usd` -> `turn-limit`. API
 * failures throw `RatchetError`s: `auth` (401/403, not logged in), `rate-limit` (429) and
 * `overloaded` (5xx, 529), both retryable, `network`, `provider`; so do a non-JSON stdout
 * (`provider`), the timeout (`timeout`, after the runner killed the process group), an abort
 * (`interrupted`) and a missing executable (`config`).
 *
 * The CLI gets the stage's Bash timeout as `BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS`
 * in its environment (over `env`), and `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1` (a Bash call
 * with `run_in_background` is refused: it would ignore the timeout and hold the call open until
 * it ended), so a command it runs cannot outlive `bash.timeout`.
 *
 * Each CLI call emits one `model-call` event (request: the system prompt and the prompt;
 * response: the final text, tokens and `total_cost_usd`; latency: `duration_ms`) and one `log`
 * event with the session id, turns, durations and cost. The outcome sums turns, tokens and cost
 * over the stage's calls.
 */
export function createClaudeCodeRuntime(options: ClaudeCodeRuntimeOptions): AgentRuntime {
  return {
    name: PROVIDER,
    // The CLI's Write and Edit do not go through the stage's file guard, and its tool calls are
    // not reported: the sandbox keeps them inside the worktree, not inside the stage's writable
    // files, so every stage is checked afterwards (see runAgentStage).
    guardsWrites: false,
    runStage: <T>(request: StageRequest<T>) => runClaudeStage(options, request),
  };
}

async function runClaudeStage<T>(
  options: ClaudeCodeRuntimeOptions,
  request: StageRequest<T>,
): Promise<StageOutcome<T>> {
  throwIfAborted(request.signal);
  const structured = request.outputSchema === undefined ? undefined : createStructuredOutput(request.outputSchema);
  const promptFile = await writePromptFile(options.promptDir, request.stage, request.systemPrompt);
  const totals: Totals = { turns: 0, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 };
  let finalText = '';
  let prompt = request.prompt;

  for (let call = 1; ; call += 1) {
    throwIfAborted(request.signal);
    const result = await callClaude(options, request, { prompt, promptFile, structured });
    totals.turns += result.num_turns;
    totals.usage = {
      inputTokens: totals.usage.inputTokens + result.usage.input_tokens,
      outputTokens: totals.usage.outputTokens + result.usage.output_tokens,
    };
    totals.costUsd += result.total_cost_usd;
    finalText = result.result ?? errorsText(result);

    const verdict = judge(result, structured);
    const common = { finalText, turns: totals.turns, usage: totals.usage, costUsd: totals.costUsd };
    if (verdict.kind === 'completed') return { status: 'completed', output: verdict.output, ...common };
    if (verdict.kind === 'stop')
      return { status: verdict.status, output: undefined, message: verdict.message, ...common };
    if (call >= MAX_CALLS) {
      return {
        status: 'invalid-output',
        output: undefined,
        message: `Claude Code's structured output failed validation ${MAX_CALLS} times in stage ${request.stage}:\n${verdict.problem}`,
        ...common,
      };
    }
    prompt =
      `${request.prompt}\n\nA previous attempt returned a structured output that failed validation:\n` +
      `${verdict.problem}\nReturn an output that satisfies every constraint.`;
  }
}

/** Subtypes that end a run Ratchet can judge; any other one is a failure of the CLI. */
const KNOWN_SUBTYPES = new Set([
  'success',
  'error_max_turns',
  'error_max_budget_usd',
  'error_max_structured_output_retries',
]);

/** The error a result stands for: API, authentication and connection failures, unknown subtypes. */
function failureOf(result: ClaudeResult): RatchetError | undefined {
  const apiFailure = apiFailureOf(result);
  if (apiFailure !== undefined || KNOWN_SUBTYPES.has(result.subtype)) return apiFailure;
  return new RatchetError(
    'provider',
    `Claude Code failed (${result.subtype}): ${errorsText(result) || result.result || 'no details'}`,
    {
      details: { sessionId: result.session_id, subtype: result.subtype },
    },
  );
}

/** What a result that is not a failure (see `failureOf`) means for the stage. */
function judge<T>(result: ClaudeResult, structured: StructuredOutput<T> | undefined): Verdict<T> {
  const reported = errorsText(result) || result.subtype;
  if (result.subtype === 'error_max_turns' || result.subtype === 'error_max_budget_usd') {
    return { kind: 'stop', status: 'turn-limit', message: `Claude Code stopped before finishing: ${reported}` };
  }
  if (result.subtype === 'error_max_structured_output_retries') {
    return {
      kind: 'stop',
      status: 'invalid-output',
      message: `Claude Code gave up on the structured output: ${reported}`,
    };
  }
  if (structured === undefined) return { kind: 'completed', output: undefined };
  if (result.structured_output === undefined) {
    return {
      kind: 'stop',
      status: 'invalid-output',
      message:
        'Claude Code finished without a structured output (the model answered in plain text instead of calling StructuredOutput).',
    };
  }
  const parsed = structured.fromToolInput(result.structured_output);
  return parsed.ok ? { kind: 'completed', output: parsed.value } : { kind: 'retry', problem: parsed.problem };
}

interface CallInput<T> {
  prompt: string;
  promptFile: string;
  structured: StructuredOutput<T> | undefined;
}

/**
 * One CLI call, reported as a `model-call` event (and a `log` event when there is a result)
 * whether it succeeds or throws. Throws the `RatchetError` of a failed call (see `failureOf`).
 */
async function callClaude<T>(
  options: ClaudeCodeRuntimeOptions,
  request: StageRequest<T>,
  input: CallInput<T>,
): Promise<ClaudeResult> {
  const sessionId = options.uuid();
  const args = [
    '-p',
    '--output-format',
    'json',
    ...(input.structured === undefined
      ? []
      : ['--json-schema', JSON.stringify(input.structured.definition.inputSchema)]),
    '--system-prompt-file',
    input.promptFile,
    '--tools',
    options.tools ?? options.allowedTools,
    '--allowedTools',
    options.allowedTools,
    // Read, Grep, Glob, Edit and Write reach the working directory (the worktree) and nothing
    // else, whatever the allowed tools say, and no settings file (which a tool could plant) widens that.
    '--restricted',
    '--max-turns',
    String(request.maxTurns),
    '--session-id',
    sessionId,
    ...(options.model === undefined ? [] : ['--model', options.model]),
  ];
  const modelRequest: ModelRequest = {
    system: request.systemPrompt,
    messages: [{ role: 'user', content: input.prompt }],
    tools: [],
  };
  const base = { type: 'model-call', stage: request.stage, provider: PROVIDER, request: modelRequest } as const;
  const now = options.now ?? Date.now;
  const started = now();
  let result: ClaudeResult;
  try {
    ({ result } = await runClaude({
      binary: options.binary,
      runner: options.runner,
      env: stageEnv(options.env, request.bashTimeoutMs, options.baseUrl),
      args,
      cwd: request.worktree,
      input: input.prompt,
      timeoutMs: options.timeoutMs,
      purpose: `stage ${request.stage}`,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    }));
  } catch (error) {
    const failure = toRatchetError(error);
    request.emit({
      ...base,
      model: options.model ?? 'default',
      response: null,
      error: { code: failure.code, message: failure.message },
      latencyMs: now() - started,
    });
    throw failure;
  }

  const model = options.model ?? Object.keys(result.modelUsage ?? {})[0] ?? 'default';
  const failure = failureOf(result);
  const response: ModelResponse = {
    text: result.result ?? errorsText(result),
    toolCalls: [],
    finishReason: finishReasonOf(result),
    usage: { inputTokens: result.usage.input_tokens, outputTokens: result.usage.output_tokens },
    costUsd: result.total_cost_usd,
    model,
    provider: PROVIDER,
    latencyMs: result.duration_ms,
  };
  request.emit({
    ...base,
    model,
    response,
    error: failure === undefined ? null : { code: failure.code, message: failure.message },
    latencyMs: result.duration_ms,
  });
  request.emit({ type: 'log', message: describeCall(request, result) });
  if (failure !== undefined) throw failure;
  return result;
}

/**
 * The CLI's environment for one stage: the configured one, with the stage's per-command Bash
 * timeout (`bash.timeout`) as both the default and the maximum Claude Code's Bash tool allows
 * (`BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_TIMEOUT_MS`), as the built-in runtime's Bash tool has it,
 * and no background Bash (which no timeout bounds).
 */
function stageEnv(
  env: Record<string, string | undefined>,
  bashTimeoutMs: number,
  baseUrl: string | undefined,
): Record<string, string | undefined> {
  const timeout = String(Math.max(1, Math.round(bashTimeoutMs)));
  return {
    ...withBaseUrl(env, baseUrl),
    BASH_DEFAULT_TIMEOUT_MS: timeout,
    BASH_MAX_TIMEOUT_MS: timeout,
    CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1',
  };
}

function finishReasonOf(result: ClaudeResult): FinishReason {
  if (result.is_error && result.subtype === 'success') return 'error';
  return result.subtype === 'success' ? 'stop' : 'other';
}

/** `claude-code RED: session <id>, success, 3 turns, 812 ms (API 240 ms), $0.0104`. */
function describeCall<T>(request: StageRequest<T>, result: ClaudeResult): string {
  const api = result.duration_api_ms === undefined ? '' : ` (API ${result.duration_api_ms} ms)`;
  return (
    `${PROVIDER} ${request.stage}: session ${result.session_id}, ${result.subtype}${result.is_error ? ' (error)' : ''}, ` +
    `${result.num_turns} turn${result.num_turns === 1 ? '' : 's'}, ${result.duration_ms} ms${api}, $${result.total_cost_usd.toFixed(4)}`
  );
}
