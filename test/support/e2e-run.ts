/**
 * Shared plumbing of the end-to-end TDD tests: a project repository, the fake Anthropic server
 * with a scripted brain behind it, the CLI environment that points the real adapter at it, and
 * readers for what a run leaves behind (commits, handoff notes, the ledger, output files).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HandoffStateSchema, NOTES_REF, type HandoffState } from '../../src/core/handoff.js';
import { openLedger } from '../../src/ledger/ledger.js';
import type {
  CheckpointRow,
  ModelCallRow,
  RunRow,
  StageRow,
  ToolCallRow,
  VerificationRow,
} from '../../src/ledger/types.js';
import { startFakeAnthropicServer, type FakeAnthropicServer, type RecordedRequest } from './fake-anthropic-server.js';
import { createScriptedBrain, type BrainScript, type ScriptedBrain } from './scripted-brain.js';
import { createTempRepo, type TempRepo } from './temp-repo.js';

/** The model id every e2e run asks for; the fake echoes it. */
export const E2E_MODEL = 'claude-e2e-model';

/** An API key unique to this process, so finding it anywhere is never a coincidence. */
export const E2E_API_KEY = `sk-ant-test-e2e-${process.pid}-${Math.random().toString(36).slice(2, 12)}-DO-NOT-STORE`;

export interface ProjectRepo extends TempRepo {
  /** `RATCHET_HOME` of the runs (worktrees live under it). */
  home: string;
}

/** A repository holding `files` in its first commit, with a `RATCHET_HOME` beside it. */
export async function createProjectRepo(files: Record<string, string>): Promise<ProjectRepo> {
  const repo = await createTempRepo({ files });
  return { ...repo, home: repo.path('ratchet-home') };
}

export interface ScriptedModel {
  server: FakeAnthropicServer;
  brain: ScriptedBrain;
}

/** Starts the fake Anthropic server with `script` as its fallback (the key must match). */
export async function startScriptedModel(script: BrainScript): Promise<ScriptedModel> {
  const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
  const brain = createScriptedBrain(script);
  server.setFallback((request) => brain.reply(request));
  return { server, brain };
}

/** The model calls a fake server received: its requests but the model list a run checks the provider with first. */
export function modelCallRequests(server: { requests: readonly RecordedRequest[] }): RecordedRequest[] {
  return server.requests.filter((request) => request.path !== '/v1/models');
}

/**
 * Environment for the CLI: git isolated as in the temp repo, `RATCHET_HOME`, and the real
 * Anthropic adapter pointed at `server` (null: no base URL) with `apiKey` (null: no key).
 */
export function ratchetEnv(
  repo: ProjectRepo,
  server: FakeAnthropicServer | null,
  apiKey: string | null = E2E_API_KEY,
): Record<string, string> {
  return {
    ...repo.env,
    RATCHET_HOME: repo.home,
    ...(server ? { ANTHROPIC_BASE_URL: server.url } : {}),
    ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}),
  };
}

/** The flags of `ratchet tdd` that select the real Anthropic adapter. */
export const ANTHROPIC_FLAGS = ['--provider', 'anthropic', '--model', E2E_MODEL] as const;

/** The state of the user's checkout, to prove a run did not touch it. */
export interface CheckoutState {
  branch: string;
  head: string;
  /** `git status --porcelain --untracked-files=all` (`.ratchet/` is excluded by Ratchet). */
  status: string;
}

export function checkoutState(repo: TempRepo): CheckoutState {
  return {
    branch: repo.run('rev-parse', '--abbrev-ref', 'HEAD'),
    head: repo.run('rev-parse', 'HEAD'),
    status: repo.run('status', '--porcelain', '--untracked-files=all'),
  };
}

export interface Checkpoint {
  sha: string;
  subject: string;
  /** The handoff note, parsed and validated against the handoff schema. */
  note: HandoffState;
}

/** Commits of `base..branch`, oldest first, each with its parsed handoff note (which must exist). */
export function checkpointsOf(repo: TempRepo, base: string, branch: string): Checkpoint[] {
  const log = repo.run('log', '--reverse', '--format=%H%x09%s', `${base}..${branch}`);
  if (log === '') return [];
  return log.split('\n').map((line) => {
    const [sha = '', subject = ''] = line.split('\t');
    const text = repo.run('notes', `--ref=${NOTES_REF}`, 'show', sha);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`the handoff note on ${sha.slice(0, 8)} (${subject}) is not JSON: ${text.slice(0, 200)}`);
    }
    return { sha, subject, note: HandoffStateSchema.parse(json) };
  });
}

/** Everything the ledger holds about one run. */
export interface LedgerSnapshot {
  run: RunRow | undefined;
  stages: StageRow[];
  modelCalls: ModelCallRow[];
  toolCalls: ToolCallRow[];
  verifications: VerificationRow[];
  checkpoints: CheckpointRow[];
}

/** Reads a run's rows from `<repo>/.ratchet/ledger.db` through the ledger's own read API. */
export async function readLedger(repoDir: string, runId: string): Promise<LedgerSnapshot> {
  const ledger = await openLedger(join(repoDir, '.ratchet', 'ledger.db'), { secrets: [] });
  try {
    return {
      run: await ledger.getRun(runId),
      stages: await ledger.stages(runId),
      modelCalls: await ledger.modelCalls(runId),
      toolCalls: await ledger.toolCalls(runId),
      verifications: await ledger.verifications(runId),
      checkpoints: await ledger.checkpoints(runId),
    };
  } finally {
    await ledger.close();
  }
}

/** Files (recursively) under each path that contain `secret` in their raw bytes. */
export function filesContaining(paths: readonly string[], secret: string): string[] {
  const needle = Buffer.from(secret);
  const found: string[] = [];
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      if (readFileSync(path).includes(needle)) found.push(path);
      return;
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (entry.isFile() && readFileSync(child).includes(needle)) found.push(child);
    }
  };
  for (const path of paths) visit(path);
  return found;
}

/** Every file under `dir`, relative to it. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** `cycle stage#attempt outcome[ reason]` for compact comparisons of stage rows. */
export function describeStage(row: StageRow, withReason: boolean): string {
  return `${row.cycle} ${row.stage}#${row.attempt} ${row.outcome ?? 'open'}${withReason && row.reason ? ` ${row.reason}` : ''}`;
}
