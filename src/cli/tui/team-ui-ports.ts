/**
 * What `ratchet team ui` does, as ports: the TUI renders and calls these; the live
 * implementation (`team-ui-live.ts`) goes through the same helpers as the CLI's team commands
 * (`startIteration`, `continueIteration`, `groomTopic`, `advanceIteration`, the approvals,
 * `iterationCheckpoints`, the layer worktrees), which persist through the team's stores; the
 * engine behind them never prints. Tests pass fakes.
 */
import type { LayerMerge, LayerReview, LayerSetup } from '../../engine/team/layer-worktrees.js';
import type { TeamEvent } from '../../workflows/team/events.js';
import type { CheckpointInfo } from '../../workflows/team/stores.js';
import type { Approval, TeamMessage } from '../../workflows/team/types.js';

/** The iteration as its files hold it when the TUI opens (and after each action). */
export interface TeamUiSnapshot {
  iterationId: string;
  description: string;
  phase: string;
  maxTurns: number;
  /** Agent turns taken in the current phase. */
  turn: number;
  currentLayer: number | null;
  /** The conversation log. */
  messages: TeamMessage[];
  /** Pending approvals only. */
  approvals: Approval[];
}

/**
 * Each fragment of a speaker's reply as the model streams it: shown while it comes, replaced by
 * the whole message (an `AppendMessage`), which is what is kept.
 */
export type OnText = (speaker: string, delta: string) => void;

export interface TeamUiPorts {
  /** The current iteration; null before the first one is started. */
  snapshot(): Promise<TeamUiSnapshot | null>;
  /** `team run "<description>"` without its session: the new iteration, made current. */
  start(description: string): Promise<string[]>;
  /**
   * `team continue [-m answer] [--max-turns n]`: the conversation's events, each already
   * persisted through the stores when it is yielded (the handler the CLI uses), so quitting
   * mid-way loses nothing said.
   */
  converse(options: { answer: string | null; moreTurns: number | null; onText: OnText }): AsyncIterable<TeamEvent>;
  /** `team groom "<topic>" [--coach]`: a grooming session's events, persisted as they come. */
  groom(options: { topic: string; withCoach: boolean; onText: OnText }): AsyncIterable<TeamEvent>;
  /** `team approvals`: every write that asked for approval in the iteration, with its decision. */
  listApprovals(): Promise<Approval[]>;
  approve(id: string): Promise<void>;
  deny(id: string, reason: string | null): Promise<void>;
  /**
   * `team advance`: the phase transition with its extraction; lines saying what it did. `force`:
   * `advance --force` (leave implementation although layers were never merged).
   */
  advance(options?: { force?: boolean }): Promise<string[]>;
  listCheckpoints(): Promise<CheckpointInfo[]>;
  createCheckpoint(description: string): Promise<CheckpointInfo>;
  restoreCheckpoint(number: number): Promise<CheckpointInfo>;
  setupLayer(): Promise<LayerSetup>;
  reviewLayer(): Promise<LayerReview>;
  mergeLayer(): Promise<LayerMerge>;
  /**
   * Stops what runs (a session between two model calls, a model call, a verifier): the TUI is
   * quitting. What runs then ends with an error the TUI waits for, its lock released.
   */
  stop(): void;
}
