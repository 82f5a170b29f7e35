/**
 * `team groom` as the CLI and the TUI both run it: the grooming session's events, each persisted
 * through the session's stores before a front end sees it (as `continueIteration` does for
 * iterations), so a front end that stops half-way loses nothing said.
 */
import type { TeamContext } from './context.js';
import type { TeamEvent } from './events.js';
import { openGroomingSession, persistEvent, type SessionDependencies } from './iteration-session.js';

export interface GroomingOptions {
  topic: string;
  /** Agent turns in this session (grooming the same topic again adds them to those before). */
  maxTurns: number;
  withCoach: boolean;
}

/** Runs the session; returns where its conversation is kept. */
export async function* groomTopic(
  ctx: TeamContext,
  deps: SessionDependencies,
  options: GroomingOptions,
): AsyncGenerator<TeamEvent, { slug: string; logPath: string }> {
  const opened = await openGroomingSession(ctx, deps, options);
  for await (const event of opened.events) {
    await persistEvent(opened.stores, event);
    yield event;
  }
  return { slug: opened.slug, logPath: opened.stores.conversation.logPath };
}
