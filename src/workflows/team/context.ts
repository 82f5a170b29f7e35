/**
 * What every team command loads once (seed 001, D2 `TeamContext`): a bag of configuration, no
 * behaviour. The engine, the transitions and the handlers all take it as a parameter.
 */
import type { ModelClient, ToolCall } from '../../core/model.js';
import type { Redactor } from '../../core/redact.js';
import type { FileOperation } from './events.js';
import type { TeamPrompts } from './prompts.js';
import type { Approval, TeamConfig, TeamMessage } from './types.js';

export interface TeamContext {
  /** The repository root. */
  projectRoot: string;
  /** `<projectRoot>/.team`. */
  teamDir: string;
  config: TeamConfig;
  prompts: TeamPrompts;
  /**
   * Applied to every message and debug entry before it is stored: the secrets of Ratchet's
   * environment never reach `.team/` (a model may repeat one it read, a user may paste one).
   */
  redact: Redactor;
}

/** What one agent's file tool call did. */
export interface FileToolOutcome {
  /** What the model sees. */
  output: string;
  isError: boolean;
  operation: FileOperation;
  /** A write outside the writable paths, waiting for the user; null otherwise. */
  approval: Approval | null;
}

/**
 * Runs an agent's `Read`, `Write` and `Glob` calls in the iteration's workspace through the file
 * guard (`file-tools.ts`). Writes inside the writable paths land; other writes inside the
 * workspace come back as pending approvals; anything outside it is refused.
 */
export interface TeamFileTools {
  execute(agentName: string, call: ToolCall, signal?: AbortSignal): Promise<FileToolOutcome>;
}

/** Who speaks: an agent or the coach of the team config. */
export interface Speaker {
  name: string;
  role: string;
  model?: string | undefined;
}

/** The effects a session uses, passed in explicitly (no module state, so tests use fakes). */
export interface SessionPorts {
  /** The conversation so far; the engine reads it once and never writes it. */
  conversation: { readFull(): Promise<TeamMessage[]> };
  /** The model client a speaker uses (its `model`, else the provider's). */
  modelFor: (speaker: Speaker) => ModelClient;
  /** Null: agents get no file tools whatever the policy says (no workspace). */
  files: TeamFileTools | null;
  signal?: AbortSignal;
  /**
   * Receives each fragment of a speaker's text as the model streams it, for a live display (the
   * TUI). Progress only: the whole text still arrives as an `AppendMessage`, which is what counts.
   */
  onTextDelta?: (speaker: string, delta: string) => void;
}
