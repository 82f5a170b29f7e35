/**
 * Persistence of the team workflow (seed 001, D2): stores read and write; the engine only reads
 * through them (history) and yields events that a handler persists. File-backed implementations
 * are in `file-stores.ts`; tests may use in-memory ones.
 */
import type { DebugEntry } from './events.js';
import type { Approval, Iteration, Phase, TeamMessage, TeamTask } from './types.js';

/** `conversation.jsonl`: one message per line, in order. */
export interface ConversationStore {
  readonly logPath: string;
  readFull(): Promise<TeamMessage[]>;
  /** The messages after the last `phase_boundary` marker (all of them when there is none). */
  readPhaseHistory(): Promise<TeamMessage[]>;
  append(msg: TeamMessage): Promise<void>;
}

/** `debug.jsonl`: model calls and tool calls, one per line. */
export interface DebugStore {
  readonly logPath: string;
  append(entry: DebugEntry): Promise<void>;
}

export interface CurrentIteration {
  iteration: Iteration;
  /** Absolute directory of the iteration (`.team/iterations/<id>/`). */
  dir: string;
}

/** `.team/iterations/<id>/iteration.json` and the index of iterations. */
export interface IterationStore {
  /** The current iteration; throws a `usage` RatchetError when there is none. */
  getCurrent(): Promise<CurrentIteration>;
  /** The current iteration, or null when none was started yet. */
  findCurrent(): Promise<CurrentIteration | null>;
  /** Creates the next iteration (`iter-N`) and makes it current. */
  create(fields: { description: string; maxTurns: number }): Promise<CurrentIteration>;
  savePhase(id: string, phase: Phase): Promise<void>;
  /** Merges `fields` into the stored iteration; keys it does not name are kept. */
  saveFields(id: string, fields: Partial<Iteration>): Promise<void>;
}

/** `approvals.json` of an iteration. */
export interface ApprovalStore {
  list(): Promise<Approval[]>;
  pending(): Promise<Approval[]>;
  add(approval: Approval): Promise<void>;
  /** Marks a pending approval approved or denied; throws a `usage` RatchetError for an unknown
   * or already resolved id. */
  resolve(id: string, decision: { status: 'approved' | 'denied'; reason?: string }): Promise<Approval>;
}

/** The artifacts of an iteration the extraction steps write. */
export interface ArtifactStore {
  readGroomed(): Promise<string | null>;
  writeGroomed(markdown: string): Promise<void>;
  readTasks(): Promise<TeamTask[] | null>;
  writeTasks(tasks: TeamTask[]): Promise<void>;
  /** Model output that could not be parsed, kept for the user (`<name>.raw.txt`). */
  writeRaw(name: string, text: string): Promise<string>;
}

export interface CheckpointInfo {
  number: number;
  phase: string;
  createdAt: string;
  description: string;
}

/** Snapshots of an iteration's state (`checkpoints/<n>/`) that restore exactly. */
export interface CheckpointStore {
  create(description: string): Promise<CheckpointInfo>;
  list(): Promise<CheckpointInfo[]>;
  restore(number: number): Promise<CheckpointInfo>;
}

/** Every store of one iteration (or one grooming session: no approvals, artifacts, checkpoints). */
export interface TeamStores {
  conversation: ConversationStore;
  debug: DebugStore;
  approvals: ApprovalStore | null;
}
