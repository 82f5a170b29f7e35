import picomatch from 'picomatch';
import type { AgentRuntime, PathPolicy, StageOutcome, StageRequest } from '../../src/core/agent.js';
import { RatchetError } from '../../src/core/errors.js';
import type { AgentStageName, StageName } from '../../src/core/stages.js';
import type { RefactorCheckResult, RenderedPrompt } from '../../src/workflows/tdd/ports.js';
import type { FakeWorkspace, FileMap } from './fake-tdd-workspace.js';

/*
 * Fakes of the TDD workflow's ports (src/workflows/tdd/ports.ts), deterministic and fast:
 *
 * - `FakeWorkspace` (fake-tdd-workspace.ts): an in-memory working tree with a linear commit
 *   history, handoff notes and git's reset semantics, mirrored into a temporary directory
 *   because the workflow fingerprints test files on disk under `workspace.root`.
 * - `FakeVerifier` (fake-tdd-verifier.ts): "runs" the suite by reading test files written as
 *   JSON lines (see `testLine`), each passing when its implementation file contains a snippet.
 * - `FakeAgent` (here): applies scripted edits per stage, in order, through the stage's path
 *   policy, and records every request; plus the prompt renderer and the size checker.
 */

// --- prompts ---

/**
 * The fake prompt renderer: the system prompt states the stage in its first line (as the real
 * prompts do) and the user prompt is the variables as JSON, so `FakeAgent` can read them back.
 */
export function fakePrompt(stage: AgentStageName, variables: Record<string, string | number>): RenderedPrompt {
  return { system: `Stage: ${stage}\nYou are the fake ${stage} agent.`, user: JSON.stringify(variables) };
}

function parseVariables(prompt: string): Record<string, string | number> {
  const value: unknown = JSON.parse(prompt);
  if (typeof value !== 'object' || value === null)
    throw new Error(`FakeAgent: the prompt is not a variables object: ${prompt}`);
  const variables: Record<string, string | number> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry === 'string' || typeof entry === 'number') variables[key] = entry;
  }
  return variables;
}

// --- the agent ---

export interface AgentTurnContext {
  workspace: FakeWorkspace;
  request: StageRequest<unknown>;
  variables: Record<string, string | number>;
}

/** What one scripted agent run does, in this order. */
export interface AgentTurn {
  /** Runs first (e.g. to abort a controller or inspect the tree). */
  act?: (context: AgentTurnContext) => void | Promise<void>;
  /** Throws this (a provider error, say) instead of finishing. */
  throws?: Error;
  /** Writes through the stage's path policy, like the Write tool: refused paths are skipped. */
  write?: Record<string, string>;
  /** Deletes through the path policy. */
  remove?: string[];
  /** Writes that bypass the path policy, as a Bash command would. */
  shell?: Record<string, string>;
  /** Symbolic links (path -> target) made on disk, as `ln -s` through Bash would. */
  link?: Record<string, string>;
  /** Commits everything with this subject, as `git commit` through Bash would. */
  commit?: string;
  /** Structured output (validated against the request's schema: invalid -> `invalid-output`). */
  output?: unknown;
  /** Ends with this non-completed status instead. */
  status?: 'turn-limit' | 'invalid-output';
  message?: string;
}

/** A recorded request of `FakeAgent`. */
export interface FakeAgentCall {
  stage: StageName;
  systemPrompt: string;
  prompt: string;
  variables: Record<string, string | number>;
  paths: PathPolicy;
  worktree: string;
  maxTurns: number;
  bashTimeoutMs: number;
  hasOutputSchema: boolean;
  /** The tree and HEAD when the stage started. */
  treeAtStart: FileMap;
  headAtStart: string;
  /** Paths the policy refused. */
  refused: string[];
}

export type AgentScript = Partial<Record<AgentStageName, AgentTurn[]>>;

function allows(globs: readonly string[], path: string): boolean {
  return globs.length > 0 && picomatch([...globs], { dot: true })(path);
}

function writable(paths: PathPolicy, path: string): boolean {
  return allows(paths.write, path) && !allows(paths.denyWrite, path);
}

/**
 * An `AgentRuntime` that plays a script: each `runStage` consumes the next turn scripted for
 * its stage. Every write emits a `tool-call` event, as the real runtime does; like the built-in
 * runtime it guards its writes, so what goes around the policy (`shell`, `commit`) is a Bash call.
 */
export class FakeAgent implements AgentRuntime {
  readonly name = 'fake';
  readonly guardsWrites = true;
  readonly calls: FakeAgentCall[] = [];
  private readonly workspace: FakeWorkspace;
  private readonly script: AgentScript;
  private readonly used: Partial<Record<AgentStageName, number>> = {};

  constructor(workspace: FakeWorkspace, script: AgentScript) {
    this.workspace = workspace;
    this.script = { ...script };
  }

  /** Adds turns after those already scripted (e.g. for a resumed run). */
  append(script: AgentScript): void {
    for (const [stage, turns] of Object.entries(script) as [AgentStageName, AgentTurn[]][]) {
      this.script[stage] = [...(this.script[stage] ?? []), ...turns];
    }
  }

  /** The recorded calls of one stage. */
  callsOf(stage: StageName): FakeAgentCall[] {
    return this.calls.filter((call) => call.stage === stage);
  }

  /** Turns scripted but never played, by stage (to check that a script was used up). */
  unusedTurns(): Partial<Record<AgentStageName, number>> {
    const left: Partial<Record<AgentStageName, number>> = {};
    for (const [stage, turns] of Object.entries(this.script) as [AgentStageName, AgentTurn[]][]) {
      const remaining = turns.length - (this.used[stage] ?? 0);
      if (remaining > 0) left[stage] = remaining;
    }
    return left;
  }

  async runStage<T>(request: StageRequest<T>): Promise<StageOutcome<T>> {
    const stage = request.stage as AgentStageName;
    const variables = parseVariables(request.prompt);
    const call: FakeAgentCall = {
      stage: request.stage,
      systemPrompt: request.systemPrompt,
      prompt: request.prompt,
      variables,
      paths: request.paths,
      worktree: request.worktree,
      maxTurns: request.maxTurns,
      bashTimeoutMs: request.bashTimeoutMs,
      hasOutputSchema: request.outputSchema !== undefined,
      treeAtStart: this.workspace.tree(),
      headAtStart: await this.workspace.head(),
      refused: [],
    };
    this.calls.push(call);
    const index = this.used[stage] ?? 0;
    const turn = this.script[stage]?.[index];
    if (turn === undefined) throw new Error(`FakeAgent: no turn ${index + 1} scripted for ${request.stage}`);
    this.used[stage] = index + 1;

    if (request.signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
    await turn.act?.({ workspace: this.workspace, request, variables });
    if (request.signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
    if (turn.throws) throw turn.throws;

    for (const [path, text] of Object.entries(turn.write ?? {})) {
      const ok = writable(request.paths, path);
      if (ok) await this.workspace.writeFile(path, text);
      else call.refused.push(path);
      this.emitTool(request, 'Write', path, ok);
    }
    for (const path of turn.remove ?? []) {
      const ok = writable(request.paths, path);
      if (ok) await this.workspace.removeFile(path);
      else call.refused.push(path);
      this.emitTool(request, 'Bash', path, ok);
    }
    for (const [path, text] of Object.entries(turn.shell ?? {})) {
      await this.workspace.writeFile(path, text);
      this.emitTool(request, 'Bash', path, true);
    }
    for (const [path, target] of Object.entries(turn.link ?? {})) {
      await this.workspace.linkOnDisk(path, target);
      this.emitTool(request, 'Bash', `ln -s ${target} ${path}`, true);
    }
    if (turn.commit !== undefined) {
      await this.workspace.checkpoint(turn.commit, { allowEmpty: true });
      this.emitTool(request, 'Bash', `git commit -m ${turn.commit}`, true);
    }

    const base = {
      finalText: `fake ${request.stage} done`,
      turns: 1,
      usage: { inputTokens: 10, outputTokens: 5 },
      costUsd: 0,
    };
    if (turn.status !== undefined) {
      return { ...base, status: turn.status, output: undefined, message: turn.message ?? `fake ${turn.status}` };
    }
    if (request.outputSchema === undefined || turn.output === undefined)
      return { ...base, status: 'completed', output: undefined };
    const parsed = request.outputSchema.safeParse(turn.output);
    if (!parsed.success) {
      return {
        ...base,
        status: 'invalid-output',
        output: undefined,
        message: `Invalid structured output: ${parsed.error.message}`,
      };
    }
    return { ...base, status: 'completed', output: parsed.data };
  }

  private emitTool(request: StageRequest<unknown>, tool: string, path: string, ok: boolean): void {
    request.emit({
      type: 'tool-call',
      stage: request.stage,
      tool,
      input: { file_path: path },
      output: ok ? 'ok' : `Refused: ${path} is not writable in stage ${request.stage}`,
      isError: !ok,
      durationMs: 0,
    });
  }
}

// --- the refactor checker ---

/** A size checker like seed 000's: a file needs refactoring past `maxLines` lines. */
export class FakeRefactorCheck {
  readonly calls: string[][] = [];
  private readonly workspace: FakeWorkspace;
  private readonly maxLines: number;

  constructor(workspace: FakeWorkspace, maxLines: number) {
    this.workspace = workspace;
    this.maxLines = maxLines;
  }

  readonly check = (files: string[]): Promise<RefactorCheckResult> => {
    this.calls.push([...files]);
    const reasons: string[] = [];
    for (const file of files) {
      const lines =
        this.workspace
          .file(file)
          ?.split('\n')
          .filter((line) => line.trim() !== '').length ?? 0;
      if (lines > this.maxLines) reasons.push(`${file}: ${lines} lines (limit ${this.maxLines})`);
    }
    return Promise.resolve({ needsRefactor: reasons.length > 0, reasons });
  };
}
