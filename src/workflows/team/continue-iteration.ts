/**
 * What `ratchet team run|continue` and the TUI's conversation key do alike, in one place: the
 * speakers' model clients, the refusal while writes wait for approval, the PM's answer and extra
 * turns, then the session with every event persisted before a front end sees it and a checkpoint
 * after it. Front ends render the events and nothing else.
 */
import { createModelPool } from '../../agent/models/model-factory.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { RatchetError } from '../../core/errors.js';
import type { ModelClient } from '../../core/model.js';
import { withRetry } from '../../llm/retry.js';
import type { Speaker, TeamContext } from './context.js';
import type { TeamEvent } from './events.js';
import { createIterationStore } from './file-stores.js';
import { countAgentTurns } from './history.js';
import { iterationStores, openIterationSession, persistEvent, type SessionDependencies } from './iteration-session.js';
import { PM_SENDER, type TeamMessage } from './types.js';

/** Each speaker's client: its own `model`, else the provider's; retried with backoff. */
export function speakerModels(
  config: ResolvedConfig,
  options: {
    env: Readonly<Record<string, string | undefined>>;
    /** Where to record a cassette of the model calls (`--record`). */
    recordPath?: string | undefined;
    /** The wait between retries (the engine's clock; rejects when the signal fires). */
    sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  },
): (speaker: Speaker) => ModelClient {
  if (config.provider.name === 'claude-code')
    throw new RatchetError('usage', '`ratchet team` needs an API provider; claude-code is an agent runtime.', {
      hint: 'Use --provider anthropic (or openai, openai-compatible, ollama, replay).',
    });
  const pool = createModelPool({
    config,
    env: options.env,
    ...(options.recordPath === undefined ? {} : { recordPath: options.recordPath }),
  });
  return (speaker) =>
    withRetry(pool.clientFor(speaker.model ?? config.provider.model), {
      maxRetries: config.provider.maxRetries,
      sleep: options.sleep,
    });
}

export interface ContinueOptions {
  /** The PM's answer to the coach, added to the conversation first; blank: none. */
  answer?: string | null | undefined;
  /** This many more agent turns in the current phase. */
  moreTurns?: number | undefined;
  /** How the front end tells the user to resolve pending approvals (its commands or keys). */
  pendingHint: string;
}

/**
 * Continues the current iteration's conversation: refused while writes wait for approval; the
 * PM's answer (yielded as an `AppendMessage`) and any extra turns first; then the session's
 * events, each persisted before it is yielded. Returns the checkpoint saved after the session;
 * null when the phase had no turn left (and no `moreTurns`): then it only yields the
 * `SessionComplete` that says so, and changes nothing (no answer added, no session, no checkpoint).
 */
export async function* continueIteration(
  ctx: TeamContext,
  deps: SessionDependencies,
  options: ContinueOptions,
): AsyncGenerator<TeamEvent, { checkpoint: number | null }> {
  const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
  const stores = iterationStores(ctx, dir, iteration.id);
  const pending = await stores.approvals.pending();
  if (pending.length > 0)
    throw new RatchetError('usage', `${pending.length} write(s) still wait for approval.`, {
      hint: options.pendingHint,
    });
  const turns = countAgentTurns(
    await stores.conversation.readPhaseHistory(),
    ctx.config.agents.map((agent) => agent.name),
  );
  // No turn left: a session would run nothing and save an empty checkpoint. The front end says how
  // to allow more (its rendering of `SessionComplete`); not persisted, as nothing happened.
  if (options.moreTurns === undefined && turns >= iteration.max_turns) {
    yield { type: 'SessionComplete', totalTurns: turns };
    return { checkpoint: null };
  }
  if (options.moreTurns !== undefined)
    await stores.iterations.saveFields(iteration.id, { max_turns: turns + options.moreTurns });
  const answer = options.answer?.trim();
  if (answer !== undefined && answer !== '') {
    const msg: TeamMessage = { from: PM_SENDER, iteration: iteration.id, content: answer };
    await stores.conversation.append(msg);
    yield { type: 'AppendMessage', msg };
  }
  return yield* runIterationSession(ctx, deps);
}

/** The current iteration's session in its phase, every event persisted; then a checkpoint. */
async function* runIterationSession(
  ctx: TeamContext,
  deps: SessionDependencies,
): AsyncGenerator<TeamEvent, { checkpoint: number }> {
  const opened = await openIterationSession(ctx, deps);
  for await (const event of opened.events) {
    await persistEvent(opened.stores, event);
    yield event;
  }
  const checkpoint = await opened.stores.checkpoints.create(`after a ${opened.iteration.phase} session`);
  return { checkpoint: checkpoint.number };
}
