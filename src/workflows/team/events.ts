/**
 * What the team engine yields (seed 001, D4 and R2). Events are render-agnostic and
 * storage-agnostic: the engine never prints and never writes its conversation; a handler (the
 * CLI's, the TUI's) persists `AppendMessage`, `AppendDebug` and `ApprovalRequested` through the
 * stores and renders whatever it likes. A handler must handle every event type (switch on
 * `type` with an exhaustive check), or it silently loses data. One event: `Extract<TeamEvent,
 * { type: 'AppendMessage' }>`.
 *
 * The session stops after `PauseForApprovals`, `CoachAskedPM`, `PhaseCompleteSignaled` (when the
 * policy stops on them) and `SessionComplete`: each is the generator's last event.
 */
import type { Phase, TeamMessage, Approval } from './types.js';

interface SessionStarted {
  type: 'SessionStarted';
  /** The iteration id, or the grooming session's slug. */
  sessionId: string;
  /** Null in a grooming session (no phases). */
  phase: Phase | null;
  agents: string[];
  /** Null when the policy runs no coach. */
  coach: string | null;
  currentLayer: number | null;
  /** Agent turns already taken in the history in scope. */
  turn: number;
  maxTurns: number;
  /** Whether agents take their turns in parallel rounds in this session. */
  parallel: boolean;
}

/** The phase's opening system message (policy `injectKickoff`, first turn of a phase only). */
interface KickoffInjected {
  type: 'KickoffInjected';
  msg: TeamMessage;
}

interface AgentTurnStarted {
  type: 'AgentTurnStarted';
  agentName: string;
  /** 0-based agent turn number in the history in scope. */
  turn: number;
}

/** A message to append to the conversation log (and show). */
interface AppendMessage {
  type: 'AppendMessage';
  msg: TeamMessage;
}

/** An entry for the debug log: every model request and response, tool calls and results. */
interface AppendDebug {
  type: 'AppendDebug';
  entry: DebugEntry;
}

export type DebugEntry =
  | {
      kind: 'model-call';
      speaker: string;
      stage: string;
      request: { system: string; messages: unknown[]; tools: string[] };
      response: { text: string; toolCalls: Array<{ name: string; input: unknown }>; finishReason: string };
      model: string;
      provider: string;
      usage: { inputTokens: number | null; outputTokens: number | null };
    }
  | { kind: 'tool-call'; speaker: string; tool: string; input: unknown; output: string; isError: boolean };

/** An agent called `pass_turn`; `msg` is the system note to append. */
interface AgentPassed {
  type: 'AgentPassed';
  agentName: string;
  reason: string;
  msg: TeamMessage;
}

export interface FileOperation {
  tool: 'Read' | 'Write' | 'Glob';
  path: string;
  /** `written`, `read`, `listed`, `pending-approval` or `refused`. */
  outcome: 'written' | 'read' | 'listed' | 'pending-approval' | 'refused';
  detail?: string;
}

/** A file tool call of an agent; `msg` is the system note to append (writes only). */
interface FileOperationLogged {
  type: 'FileOperationLogged';
  agentName: string;
  operation: FileOperation;
  msg: TeamMessage | null;
}

/** A write outside the writable paths: the handler stores `approval` as pending. */
interface ApprovalRequested {
  type: 'ApprovalRequested';
  approval: Approval;
}

interface CoachTurnStarted {
  type: 'CoachTurnStarted';
  coachName: string;
  turn: number;
}

/** Agents start a parallel round (fan-out); their messages follow in agent order (fan-in). */
interface ParallelRoundStarted {
  type: 'ParallelRoundStarted';
  agents: string[];
  turn: number;
}

/** The coach called `signal_phase_complete`; the user runs `team advance`. */
interface PhaseCompleteSignaled {
  type: 'PhaseCompleteSignaled';
  summary: string;
  phase: Phase | null;
}

/** The coach called `ask_pm`; the user answers with `team continue -m`. */
interface CoachAskedPM {
  type: 'CoachAskedPM';
  question: string;
}

/** Writes are waiting for `team approve` / `team deny`. */
interface PauseForApprovals {
  type: 'PauseForApprovals';
  pendingCount: number;
}

interface SessionComplete {
  type: 'SessionComplete';
  totalTurns: number;
}

export type TeamEvent =
  | SessionStarted
  | KickoffInjected
  | AgentTurnStarted
  | AppendMessage
  | AppendDebug
  | AgentPassed
  | FileOperationLogged
  | ApprovalRequested
  | CoachTurnStarted
  | ParallelRoundStarted
  | PhaseCompleteSignaled
  | CoachAskedPM
  | PauseForApprovals
  | SessionComplete;
