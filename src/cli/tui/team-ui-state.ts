/**
 * The TUI's state and how events and keys change it: a pure reducer, so what the screen shows
 * for a stream of engine events is tested without a terminal.
 */
import type { LayerReview } from '../../engine/team/layer-worktrees.js';
import type { TeamEvent } from '../../workflows/team/events.js';
import type { CheckpointInfo } from '../../workflows/team/stores.js';
import type { Approval, TeamMessage } from '../../workflows/team/types.js';
import type { TeamUiSnapshot } from './team-ui-ports.js';

/** What the session is doing, and what it waits for when it stopped. */
type SessionStatus =
  | { kind: 'idle' }
  | { kind: 'running'; speakers: readonly string[] }
  | { kind: 'asked'; question: string }
  | { kind: 'approvals'; pending: number }
  | { kind: 'phase-complete'; summary: string }
  | { kind: 'complete'; turns: number }
  | { kind: 'busy'; what: string }
  | { kind: 'failed'; message: string };

/** What a line typed at the bottom of the screen is for. */
export type Prompt =
  /** `continue -m`: the PM's answer to the coach. */
  | { for: 'answer' }
  /** `deny <id> -m`: why, for the agents. */
  | { for: 'deny'; approvalId: string }
  /** `continue --max-turns n`: this many more agent turns in the phase. */
  | { for: 'turns' }
  /** `run "<description>"`: a new iteration. */
  | { for: 'start' }
  /** `groom "<topic>" [--coach]`. */
  | { for: 'groom'; withCoach: boolean }
  /** `checkpoint create "<description>"`. */
  | { for: 'checkpoint' }
  /** `advance --force`: `yes` confirms leaving implementation with layers never merged. */
  | { for: 'force' };

/** Which part of the screen the keys go to. */
export type Mode =
  | { kind: 'conversation' }
  | { kind: 'input'; prompt: Prompt; text: string }
  | {
      kind: 'checkpoints';
      checkpoints: CheckpointInfo[];
      selected: number;
      /** Restoring replaces the iteration's state: it waits for a `y`. */
      confirming: boolean;
    }
  /** Every approval of the iteration with its decision (`team approvals`). */
  | { kind: 'approvals'; approvals: Approval[] }
  /** A grooming session's conversation (outside the iteration; its own turns). */
  | { kind: 'grooming'; topic: string; withCoach: boolean; messages: TeamMessage[]; turn: number; maxTurns: number }
  | {
      kind: 'review';
      review: LayerReview | null;
      /** Why there is no review (no tasks yet, no worktrees yet). */
      problem: string | null;
      task: number;
      scroll: number;
    };

export interface TeamUiState {
  /** False until an iteration exists (the TUI can start one). */
  hasIteration: boolean;
  iterationId: string;
  description: string;
  phase: string;
  turn: number;
  maxTurns: number;
  currentLayer: number | null;
  messages: TeamMessage[];
  approvals: Approval[];
  selected: number;
  status: SessionStatus;
  mode: Mode;
  /** The last thing an action said (advance, merge, an error), shown under the conversation. */
  notice: string[];
  /**
   * Replies still streaming, by speaker (several at once in a parallel round), shown after the
   * conversation until each one's whole message arrives.
   */
  streaming: Array<{ speaker: string; text: string }>;
}

export type Action =
  | { type: 'snapshot'; snapshot: TeamUiSnapshot | null }
  | { type: 'event'; event: TeamEvent }
  /** An event of a grooming session: its messages and turns go to the grooming view only. */
  | { type: 'grooming-event'; event: TeamEvent }
  | { type: 'status'; status: SessionStatus }
  | { type: 'notice'; lines: string[] }
  /** ↑↓ in the approvals or the checkpoints list. */
  | { type: 'select'; delta: number }
  | { type: 'mode'; mode: Mode }
  /** A fragment of a speaker's reply as it streams. */
  | { type: 'text'; speaker: string; delta: string }
  /** A key typed into the answer or the denial reason (`null`: backspace). */
  | { type: 'type'; input: string | null };

export function initialState(): TeamUiState {
  return {
    hasIteration: false,
    iterationId: '',
    description: '',
    phase: '',
    turn: 0,
    maxTurns: 0,
    currentLayer: null,
    messages: [],
    approvals: [],
    selected: 0,
    status: { kind: 'idle' },
    mode: { kind: 'conversation' },
    notice: [],
    streaming: [],
  };
}

/** The state after one engine event: every event type is handled (the union is exhaustive). */
function applyEvent(state: TeamUiState, event: TeamEvent): TeamUiState {
  switch (event.type) {
    case 'SessionStarted':
      return {
        ...state,
        phase: event.phase ?? state.phase,
        turn: event.turn,
        maxTurns: event.maxTurns,
        currentLayer: event.currentLayer ?? state.currentLayer,
        status: { kind: 'running', speakers: [] },
      };
    case 'AgentTurnStarted':
      return { ...state, turn: event.turn + 1, status: { kind: 'running', speakers: [event.agentName] } };
    case 'CoachTurnStarted':
      return { ...state, status: { kind: 'running', speakers: [event.coachName] } };
    case 'ParallelRoundStarted':
      return {
        ...state,
        turn: event.turn + event.agents.length,
        status: { kind: 'running', speakers: event.agents },
      };
    case 'AppendMessage':
      return { ...state, messages: [...state.messages, event.msg] };
    case 'ApprovalRequested':
      return { ...state, approvals: [...state.approvals, event.approval] };
    case 'PauseForApprovals':
      return { ...state, status: { kind: 'approvals', pending: event.pendingCount } };
    case 'CoachAskedPM':
      return { ...state, status: { kind: 'asked', question: event.question } };
    case 'PhaseCompleteSignaled':
      return { ...state, status: { kind: 'phase-complete', summary: event.summary } };
    case 'SessionComplete':
      return { ...state, status: { kind: 'complete', turns: event.totalTurns } };
    // Shown through the AppendMessage that carries each one's note, or not at all (debug log).
    case 'KickoffInjected':
    case 'AgentPassed':
    case 'FileOperationLogged':
    case 'AppendDebug':
      return state;
  }
}

export function reduce(state: TeamUiState, action: Action): TeamUiState {
  switch (action.type) {
    case 'snapshot': {
      const { snapshot } = action;
      if (snapshot === null) return { ...initialState(), status: state.status, mode: state.mode, notice: state.notice };
      return {
        ...state,
        hasIteration: true,
        // Loaded after an action ended: what still streamed then is in the log, or was never said.
        streaming: [],
        iterationId: snapshot.iterationId,
        description: snapshot.description,
        phase: snapshot.phase,
        // The files say how far the phase got; a running session's events say it better.
        turn: state.status.kind === 'running' ? state.turn : snapshot.turn,
        maxTurns: snapshot.maxTurns,
        currentLayer: snapshot.currentLayer,
        messages: snapshot.messages,
        approvals: snapshot.approvals,
        selected: Math.min(state.selected, Math.max(0, snapshot.approvals.length - 1)),
      };
    }
    case 'event':
      return withoutStreamed(applyEvent(state, action.event), action.event);
    case 'grooming-event':
      return withoutStreamed(applyGroomingEvent(state, action.event), action.event);
    case 'text': {
      const known = state.streaming.some((entry) => entry.speaker === action.speaker);
      return {
        ...state,
        streaming: known
          ? state.streaming.map((entry) =>
              entry.speaker === action.speaker ? { ...entry, text: entry.text + action.delta } : entry,
            )
          : [...state.streaming, { speaker: action.speaker, text: action.delta }],
      };
    }
    case 'status':
      return { ...state, status: action.status };
    case 'notice':
      return { ...state, notice: action.lines };
    case 'select': {
      const { mode } = state;
      if (mode.kind === 'checkpoints') {
        const count = mode.checkpoints.length;
        const selected = count === 0 ? 0 : (mode.selected + action.delta + count) % count;
        return { ...state, mode: { ...mode, selected, confirming: false } };
      }
      const count = state.approvals.length;
      return count === 0 ? state : { ...state, selected: (state.selected + action.delta + count) % count };
    }
    case 'mode':
      return { ...state, mode: action.mode };
    case 'type': {
      const { mode } = state;
      if (mode.kind !== 'input') return state;
      const text = action.input === null ? mode.text.slice(0, -1) : mode.text + action.input;
      return { ...state, mode: { ...mode, text } };
    }
  }
}

/**
 * A grooming session's event: the status line follows it as for an iteration's session, while
 * its messages and turns stay in the grooming view (the iteration's header and log are not its).
 */
function applyGroomingEvent(state: TeamUiState, event: TeamEvent): TeamUiState {
  const { mode } = state;
  const status = applyEvent(state, event).status;
  if (mode.kind !== 'grooming') return { ...state, status };
  switch (event.type) {
    case 'SessionStarted':
      return { ...state, status, mode: { ...mode, turn: event.turn, maxTurns: event.maxTurns } };
    case 'AgentTurnStarted':
      return { ...state, status, mode: { ...mode, turn: event.turn + 1 } };
    case 'AppendMessage':
      return { ...state, status, mode: { ...mode, messages: [...mode.messages, event.msg] } };
    default:
      return { ...state, status };
  }
}

/**
 * Streamed text gives way to what it became: a speaker's whole message replaces its fragments,
 * and a session that stopped (paused, asked, complete) leaves none behind.
 */
function withoutStreamed(state: TeamUiState, event: TeamEvent): TeamUiState {
  if (state.streaming.length === 0) return state;
  switch (event.type) {
    case 'AppendMessage':
      return { ...state, streaming: state.streaming.filter((entry) => entry.speaker !== event.msg.from) };
    case 'SessionComplete':
    case 'PauseForApprovals':
    case 'CoachAskedPM':
    case 'PhaseCompleteSignaled':
      return { ...state, streaming: [] };
    default:
      return state;
  }
}
