/**
 * What `ratchet team ui` does, as ports: the TUI renders and calls these; the live
 * implementation (`team-ui-live.ts`) persists through the same stores the CLI's team commands
 * use, and the engine behind it never prints. Tests pass fakes.
 */
import type { LayerMerge, LayerReview, LayerSetup } from '../../engine/team/layer-worktrees.js';
import type { TeamEvent } from '../../workflows/team/events.js';
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

export interface TeamUiPorts {
  snapshot(): Promise<TeamUiSnapshot>;
  /**
   * `team continue [-m answer]`: the conversation's events, each already persisted through the
   * stores when it is yielded (the handler the CLI uses), so quitting mid-way loses nothing.
   */
  converse(answer: string | null): AsyncIterable<TeamEvent>;
  approve(id: string): Promise<void>;
  deny(id: string, reason: string | null): Promise<void>;
  /** `team advance`: the phase transition with its extraction; lines saying what it did. */
  advance(): Promise<string[]>;
  setupLayer(): Promise<LayerSetup>;
  reviewLayer(): Promise<LayerReview>;
  mergeLayer(): Promise<LayerMerge>;
}
