import picomatch from 'picomatch';
import type { AgentRuntime, PathPolicy, StageOutcome, StageRequest } from '../../src/core/agent.js';
import { RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import type { StageName } from '../../src/core/stages.js';
import type { UnsafeEntry } from '../../src/core/unsafe-entry.js';
import type { CheckResult } from '../../src/core/verification.js';
import { locTouched, parseUnifiedDiff, patchFilePath, touchedFiles } from '../../src/edit/unified-diff.js';
import type { RefactorLoopResult } from '../../src/workflows/refactor/batch-loop.js';
import { compareFormatting } from '../../src/code/format-check.js';
import type {
  ApiChange,
  FormatResult,
  PatchAdmissionResult,
  RefactorDependencies,
  RefactorPolicy,
  RefactorVerifier,
  RefactorWorkspace,
  VerifierRun,
} from '../../src/workflows/refactor/ports.js';
import type { PatchResponse, PlannedBatch } from '../../src/workflows/refactor/schemas.js';

/*
 * Fakes of the refactor workflow's ports (src/workflows/refactor/ports.ts), in memory and
 * deterministic:
 *
 * - `FakeRefactorWorkspace`: a file map with git-like commits (`c001`, `c002`, ...), a HEAD that
 *   `resetTo` moves back, and `apply` of real unified diffs (hunks must match exactly).
 * - `FakeRefactorVerifier`: fails a level when a file contains that level's marker
 *   (`BROKEN` breaks both levels, `FULL_BUG` only the full verifier).
 * - `FakeRefactorAgent`: plays scripted turns per role and per batch, records every request.
 * - `createRefactorDeps`: the rest (context, admission checks, public API, TASK_LEDGER, and a
 *   `FakeClock` that moves only when a test advances it).
 */

export type FileMap = Record<string, string>;

interface FakeCommit {
  sha: string;
  parent: string | null;
  subject: string;
  body: string;
  tree: FileMap;
}

/** Applies a unified diff to `tree`; throws when a hunk does not match. Pure. */
export function applyUnifiedDiff(tree: FileMap, patch: string): { tree: FileMap; files: string[] } {
  const parsed = parseUnifiedDiff(patch);
  if (parsed.errors.length > 0) throw new Error(`unusable patch: ${parsed.errors.join('; ')}`);
  const next = { ...tree };
  for (const file of parsed.files) {
    const path = patchFilePath(file);
    if (file.newPath === null) {
      if (next[path] === undefined) throw new Error(`${path}: no such file to delete`);
      delete next[path];
      continue;
    }
    const source = file.oldPath === null ? '' : next[file.oldPath];
    if (source === undefined) throw new Error(`${path}: no such file`);
    let lines = source === '' ? [] : source.replace(/\n$/, '').split('\n');
    for (const hunk of file.hunks) {
      const body = hunk.lines.filter((line) => !line.startsWith('\\'));
      const before = body.filter((line) => !line.startsWith('+')).map((line) => line.slice(1));
      const after = body.filter((line) => !line.startsWith('-')).map((line) => line.slice(1));
      const at = findBlock(lines, before, Math.max(0, hunk.oldStart - 1));
      if (at < 0) throw new Error(`${path}: hunk @@ -${hunk.oldStart} does not apply`);
      lines = [...lines.slice(0, at), ...after, ...lines.slice(at + before.length)];
    }
    if (file.oldPath !== null && file.oldPath !== file.newPath) delete next[file.oldPath];
    next[file.newPath] = lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }
  return { tree: next, files: touchedFiles(parsed) };
}

function findBlock(lines: string[], block: string[], hint: number): number {
  const matches = (at: number): boolean => block.every((line, offset) => lines[at + offset] === line);
  if (block.length === 0) return Math.min(hint, lines.length);
  if (matches(hint)) return hint;
  for (let at = 0; at + block.length <= lines.length; at++) if (matches(at)) return at;
  return -1;
}

/** A unified diff replacing the whole of `path` (null `before`: create it; null `after`: delete it). */
export function wholeFileDiff(path: string, before: string | null, after: string | null): string {
  const split = (text: string | null): string[] =>
    text === null || text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const old = split(before);
  const now = split(after);
  const header = [
    `diff --git a/${path} b/${path}`,
    ...(before === null ? ['new file mode 100644'] : []),
    ...(after === null ? ['deleted file mode 100644'] : []),
    `--- ${before === null ? '/dev/null' : `a/${path}`}`,
    `+++ ${after === null ? '/dev/null' : `b/${path}`}`,
    `@@ -${old.length === 0 ? 0 : 1},${old.length} +${now.length === 0 ? 0 : 1},${now.length} @@`,
  ];
  return `${[...header, ...old.map((line) => `-${line}`), ...now.map((line) => `+${line}`)].join('\n')}\n`;
}

export class FakeRefactorWorkspace implements RefactorWorkspace {
  readonly root = '/fake/worktree';
  private files: FileMap;
  private readonly commits = new Map<string, FakeCommit>();
  private headSha: string;
  private counter = 0;
  /** What a command made in the work tree that no checkpoint may hold (not part of `files`). */
  private unsafe: UnsafeEntry[] = [];

  constructor(files: FileMap) {
    this.files = { ...files };
    this.headSha = this.commit('baseline', '');
  }

  private commit(subject: string, body: string): string {
    this.counter++;
    const sha = `c${String(this.counter).padStart(3, '0')}`;
    this.commits.set(sha, {
      sha,
      parent: this.counter === 1 ? null : this.headSha,
      subject,
      body,
      tree: { ...this.files },
    });
    return sha;
  }

  tree(): FileMap {
    return { ...this.files };
  }

  file(path: string): string | undefined {
    return this.files[path];
  }

  /** An in-place edit, as an agent's Write tool would make. */
  write(path: string, text: string): void {
    this.files[path] = text;
  }

  /** Commits reachable from HEAD, newest first (the baseline last). */
  log(): Array<{ sha: string; subject: string; body: string }> {
    const out: Array<{ sha: string; subject: string; body: string }> = [];
    for (
      let at = this.commits.get(this.headSha);
      at;
      at = at.parent === null ? undefined : this.commits.get(at.parent)
    ) {
      out.push({ sha: at.sha, subject: at.subject, body: at.body });
    }
    return out;
  }

  treeAt(sha: string): FileMap {
    const commit = this.commits.get(sha);
    if (!commit) throw new Error(`no commit ${sha}`);
    return { ...commit.tree };
  }

  head(): Promise<string> {
    return Promise.resolve(this.headSha);
  }

  checkpoint(subject: string, body?: string): Promise<string> {
    if (this.unsafe.length > 0) throw new Error(`FakeRefactorWorkspace: "${subject}" would commit unsafe entries`);
    this.headSha = this.commit(subject, body ?? '');
    return Promise.resolve(this.headSha);
  }

  resetTo(commit: string): Promise<void> {
    this.files = this.treeAt(commit);
    this.headSha = commit;
    this.unsafe = [];
    return Promise.resolve();
  }

  /** As a command run in the work tree would: a nested repository, a link leading out... */
  plantUnsafe(entry: UnsafeEntry): void {
    this.unsafe.push(entry);
  }

  unsafeEntries(): Promise<UnsafeEntry[]> {
    return Promise.resolve([...this.unsafe]);
  }

  applyCheck(patch: string): Promise<{ ok: boolean; error: string }> {
    try {
      applyUnifiedDiff(this.files, patch);
      return Promise.resolve({ ok: true, error: '' });
    } catch (error) {
      return Promise.resolve({ ok: false, error: (error as Error).message });
    }
  }

  apply(patch: string): Promise<string[]> {
    const applied = applyUnifiedDiff(this.files, patch);
    this.files = applied.tree;
    return Promise.resolve(applied.files);
  }
}

export interface FakeVerifierCall {
  level: 'fast' | 'full';
  stage: StageName;
  tree: FileMap;
}

/** Fails `fast` when a file contains `BROKEN`; fails `full` on `BROKEN` or `FULL_BUG`. */
export class FakeRefactorVerifier implements RefactorVerifier {
  readonly calls: FakeVerifierCall[] = [];
  private readonly workspace: FakeRefactorWorkspace;

  constructor(workspace: FakeRefactorWorkspace) {
    this.workspace = workspace;
  }

  run(level: 'fast' | 'full', stage: StageName, signal?: AbortSignal): Promise<VerifierRun> {
    if (signal?.aborted) return Promise.reject(new RatchetError('interrupted', 'Interrupted'));
    const tree = this.workspace.tree();
    this.calls.push({ level, stage, tree });
    // Tests that make a repository of their own in the work tree (`git init fixture`).
    if (Object.values(tree).some((text) => text.includes('GIT_INIT_IN_TESTS'))) {
      this.workspace.plantUnsafe({ kind: 'nested-repository', path: 'fixture', detail: 'fixture/.git exists' });
    }
    const markers = level === 'fast' ? ['BROKEN'] : ['BROKEN', 'FULL_BUG'];
    const bad = Object.entries(tree).filter(([, text]) => markers.some((marker) => text.includes(marker)));
    const output = bad.length > 0 ? bad.map(([path]) => `FAIL ${path}: marker found`).join('\n') : 'all tests passed';
    const result: CheckResult = {
      name: `${level} tests`,
      command: `npm test -- --${level}`,
      exitCode: bad.length > 0 ? 1 : 0,
      timedOut: false,
      durationMs: 0,
      output,
      ok: bad.length === 0,
    };
    return Promise.resolve({ level, ok: result.ok, results: [{ result, outputFile: null }] });
  }
}

// --- the agent ---

export type Role = 'PATCHER' | 'CRITIC';

/** One scripted agent run. */
export interface RefactorTurn {
  /** Runs first (e.g. to abort a controller); gets the workspace for in-place edits. */
  act?: (workspace: FakeRefactorWorkspace) => void;
  /** Structured output, validated against the request's schema (invalid -> `invalid-output`). */
  output?: unknown;
  /** Ends with this non-completed status instead. */
  status?: 'turn-limit' | 'invalid-output';
  message?: string;
}

/** Turns per role, then per batch id (read from the prompt's `# Batch <id>:` line), in attempt order. */
export type RefactorScript = Partial<Record<Role, Record<string, RefactorTurn[]>>>;

export interface FakeRefactorCall {
  stage: StageName;
  batch: string;
  systemPrompt: string;
  prompt: string;
  paths: PathPolicy;
  maxTurns: number;
  hasOutputSchema: boolean;
  headAtStart: string;
}

function batchOf(prompt: string): string {
  const match = /^# Batch (\S+?):/m.exec(prompt) ?? /^Batch (\S+?):/m.exec(prompt);
  if (!match?.[1]) throw new Error(`FakeRefactorAgent: no batch id in the prompt:\n${prompt}`);
  return match[1];
}

export class FakeRefactorAgent implements AgentRuntime {
  readonly name = 'fake-refactor';
  readonly calls: FakeRefactorCall[] = [];
  private readonly used = new Map<string, number>();
  private readonly workspace: FakeRefactorWorkspace;
  private readonly script: RefactorScript;

  constructor(workspace: FakeRefactorWorkspace, script: RefactorScript) {
    this.workspace = workspace;
    this.script = script;
  }

  callsOf(stage: StageName, batch?: string): FakeRefactorCall[] {
    return this.calls.filter((call) => call.stage === stage && (batch === undefined || call.batch === batch));
  }

  /** Scripted turns never played, as `ROLE batch` -> count. */
  unusedTurns(): Record<string, number> {
    const left: Record<string, number> = {};
    for (const [role, batches] of Object.entries(this.script)) {
      for (const [batch, turns] of Object.entries(batches)) {
        const remaining = turns.length - (this.used.get(`${role} ${batch}`) ?? 0);
        if (remaining > 0) left[`${role} ${batch}`] = remaining;
      }
    }
    return left;
  }

  async runStage<T>(request: StageRequest<T>): Promise<StageOutcome<T>> {
    const role = request.stage as Role;
    const batch = batchOf(request.prompt);
    this.calls.push({
      stage: request.stage,
      batch,
      systemPrompt: request.systemPrompt,
      prompt: request.prompt,
      paths: request.paths,
      maxTurns: request.maxTurns,
      hasOutputSchema: request.outputSchema !== undefined,
      headAtStart: await this.workspace.head(),
    });
    const key = `${role} ${batch}`;
    const index = this.used.get(key) ?? 0;
    const turn = this.script[role]?.[batch]?.[index];
    if (turn === undefined) throw new Error(`FakeRefactorAgent: no turn ${index + 1} scripted for ${key}`);
    this.used.set(key, index + 1);
    if (request.signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
    turn.act?.(this.workspace);
    if (request.signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
    request.emit({
      type: 'tool-call',
      stage: request.stage,
      tool: 'Read',
      input: { file_path: 'src' },
      output: 'ok',
      isError: false,
      durationMs: 0,
    });
    const base = {
      finalText: `fake ${request.stage} done`,
      turns: 1,
      usage: { inputTokens: 10, outputTokens: 5 },
      costUsd: 0,
    };
    if (turn.status !== undefined)
      return { ...base, status: turn.status, output: undefined, message: turn.message ?? `fake ${turn.status}` };
    if (request.outputSchema === undefined || turn.output === undefined)
      return { ...base, status: 'completed', output: undefined };
    const parsed = request.outputSchema.safeParse(turn.output);
    if (!parsed.success)
      return {
        ...base,
        status: 'invalid-output',
        output: undefined,
        message: `Invalid structured output: ${parsed.error.message}`,
      };
    return { ...base, status: 'completed', output: parsed.data };
  }
}

/** A PatchResponse turn with status `ok`. */
export function patchTurn(patch: string, touched: string[], rationale = 'tidy up'): RefactorTurn {
  const output: PatchResponse = {
    status: 'ok',
    rationale,
    risk_notes: [],
    patch_unified_diff: patch,
    touched_files: touched,
    expected_verifier: ['fast'],
  };
  return { output };
}

/** A turn whose patch rewrites `path` from `before` to `after`, as a whole-file diff. */
export function rewriteTurn(path: string, before: string, after: string, rationale?: string): RefactorTurn {
  return patchTurn(wholeFileDiff(path, before, after), [path], rationale);
}

export function statusTurn(status: 'noop' | 'blocked', rationale: string): RefactorTurn {
  const output: PatchResponse = {
    status,
    rationale,
    risk_notes: [],
    patch_unified_diff: '',
    touched_files: [],
    expected_verifier: [],
  };
  return { output };
}

export function criticTurn(
  decision: 'accept' | 'reject' | 'shrink_scope' | 'shrink_diff' | 'noop',
  reasons: string[] = [],
): RefactorTurn {
  return { output: { decision, reasons } };
}

// --- the other dependencies ---

const EXPORT = /^export\s+(?:async\s+)?(?:const|let|function|class|interface|type)\s+([A-Za-z_$][\w$]*)/gm;

/** `path#name` for every `export <kind> name` of every .ts file. */
export function exportedNames(tree: FileMap): Set<string> {
  const names = new Set<string>();
  for (const [path, text] of Object.entries(tree)) {
    if (!path.endsWith('.ts')) continue;
    for (const match of text.matchAll(EXPORT)) names.add(`${path}#${match[1] ?? ''}`);
  }
  return names;
}

export interface FakeRefactorDeps extends RefactorDependencies {
  workspace: FakeRefactorWorkspace;
  verifier: FakeRefactorVerifier;
  agent: FakeRefactorAgent;
  /** Every `contextFor` call. */
  contextCalls: Array<{ batch: string; feedback: string | null }>;
  taskLedger: Array<Record<string, unknown>>;
  /** Every `acceptApi` call, with HEAD at the time. */
  apiAccepted: string[];
  /** The clock behind `now()`: it stands still until a test advances it. */
  clock: FakeClock;
}

/** A clock that only moves when told to (e.g. from a turn's `act`). */
export class FakeClock {
  private ms: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * Wires the fakes together. Admission follows seed 002, 17.1 over the real diff parser: touched
 * files inside the scope, declared files matching, the diff budget, and a clean apply check.
 */
/**
 * The fake formatter of formatting-only batches: rewrites the whole tree (it may touch any file,
 * in scope or not); `fails` makes the formatter command exit 1 instead.
 */
export interface FakeFormatter {
  rewrite?: (tree: FileMap) => FileMap;
  fails?: boolean;
}

export function createRefactorDeps(
  files: FileMap,
  script: RefactorScript,
  clock = new FakeClock(),
  formatter: FakeFormatter = {},
): FakeRefactorDeps {
  const workspace = new FakeRefactorWorkspace(files);
  const verifier = new FakeRefactorVerifier(workspace);
  const agent = new FakeRefactorAgent(workspace, script);
  const contextCalls: Array<{ batch: string; feedback: string | null }> = [];
  const taskLedger: Array<Record<string, unknown>> = [];
  const apiAccepted: string[] = [];
  let apiReference = exportedNames(workspace.tree());
  return {
    workspace,
    verifier,
    agent,
    contextCalls,
    taskLedger,
    apiAccepted,
    clock,
    now: () => clock.now(),
    agentFor: () => agent,
    systemPrompt: (role) => `Role: ${role}\nYou are the fake ${role.toLowerCase()}.`,
    contextFor(batch: PlannedBatch, feedback: string | null): Promise<string> {
      contextCalls.push({ batch: batch.id, feedback });
      const parts = [`# Batch ${batch.id}: ${batch.goal}`, `Scope: ${batch.scope_globs.join(', ')}`];
      if (feedback !== null) parts.push(`## Feedback on your previous attempt\n${feedback}`);
      return Promise.resolve(parts.join('\n\n'));
    },
    async admit(batch: PlannedBatch, patch: string, declared: string[]): Promise<PatchAdmissionResult> {
      const parsed = parseUnifiedDiff(patch);
      const violations = [...parsed.errors];
      const touched = touchedFiles(parsed);
      const inScope = picomatch(batch.scope_globs, { dot: true });
      for (const path of touched)
        if (!inScope(path)) violations.push(`${path} is outside the batch scope (${batch.scope_globs.join(', ')})`);
      for (const path of declared)
        if (!touched.includes(path)) violations.push(`touched_files lists ${path}, which the patch does not change`);
      const loc = locTouched(parsed);
      if (loc > batch.diff_budget_loc)
        violations.push(`the patch changes ${loc} lines; the budget is ${batch.diff_budget_loc}`);
      if (violations.length === 0) {
        const check = await workspace.applyCheck(patch);
        if (!check.ok) violations.push(`git apply --check failed: ${check.error}`);
      }
      return violations.length === 0
        ? { admitted: true, patchText: patch, files: touched, loc, violations: [] }
        : { admitted: false, patchText: patch, files: [], loc: 0, violations };
    },
    async format(batch: PlannedBatch): Promise<FormatResult> {
      const ok = formatter.fails !== true;
      const result: CheckResult = {
        name: 'format',
        command: 'fake-format --write .',
        exitCode: ok ? 0 : 1,
        timedOut: false,
        durationMs: 0,
        output: ok ? 'formatted' : 'fake-format: syntax error in src/a.ts',
        ok,
      };
      const run = { ok, results: [{ result, outputFile: null }] };
      if (!ok) return { run, files: [], loc: 0, reverted: [] };
      const before = workspace.tree();
      const after = formatter.rewrite?.(before) ?? before;
      const inScope = picomatch(batch.scope_globs, { dot: true });
      const kept: string[] = [];
      const reverted: string[] = [];
      let loc = 0;
      for (const path of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
        const old = before[path];
        const now = after[path];
        if (old === now) continue;
        const verdict =
          old === undefined || now === undefined
            ? { formattingOnly: false as const, reason: 'created or deleted' }
            : await compareFormatting(path, old, now);
        if (!inScope(path)) reverted.push(`${path}: outside the batch scope`);
        else if (!verdict.formattingOnly) reverted.push(`${path}: not formatting-only: ${verdict.reason}`);
        else {
          kept.push(path);
          workspace.write(path, now ?? '');
          loc += locTouched(parseUnifiedDiff(wholeFileDiff(path, old ?? null, now ?? null)));
        }
      }
      return { run, files: kept, loc, reverted };
    },
    apiChanges(): Promise<ApiChange> {
      const now = exportedNames(workspace.tree());
      return Promise.resolve({
        removed: [...apiReference].filter((name) => !now.has(name)),
        changed: [],
        added: [...now].filter((name) => !apiReference.has(name)),
      });
    },
    async acceptApi(): Promise<void> {
      apiReference = exportedNames(workspace.tree());
      apiAccepted.push(await workspace.head());
    },
    appendTaskLedger(entry: Record<string, unknown>): Promise<void> {
      taskLedger.push(entry);
      return Promise.resolve();
    },
  };
}

export const DEFAULT_POLICY: RefactorPolicy = {
  retryPerBatch: 2,
  runFullVerifierEvery: 100,
  allowPublicApiChanges: false,
  useCritic: false,
  maxTurnsPatcher: 8,
  bashTimeoutMs: 1000,
  maxRuntimeMs: null,
};

/** A batch scoped to one file (fast verifier, budget 50). */
export function batch(id: string, path: string, overrides: Partial<PlannedBatch> = {}): PlannedBatch {
  return {
    id,
    goal: `Tidy ${path}`,
    scope_globs: [path],
    allowed_operations: ['extract-function'],
    diff_budget_loc: 50,
    risk_score: 10,
    verifier_level: 'fast',
    ...overrides,
  };
}

export interface LoopRun {
  events: EventInput[];
  result: RefactorLoopResult | undefined;
  error: unknown;
}

/** Drains a workflow generator, keeping its events, its result or the error it threw. */
export async function drive(loop: AsyncGenerator<EventInput, RefactorLoopResult>): Promise<LoopRun> {
  const events: EventInput[] = [];
  try {
    let step = await loop.next();
    while (!step.done) {
      events.push(step.value);
      step = await loop.next();
    }
    return { events, result: step.value, error: undefined };
  } catch (error) {
    return { events, result: undefined, error };
  }
}
