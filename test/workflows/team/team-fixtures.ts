/** Shared set-up of the team workflow tests: a context with the package prompts, scripted speakers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelRequest } from '../../../src/core/model.js';
import type { SessionPorts, Speaker, TeamContext, TeamFileTools } from '../../../src/workflows/team/context.js';
import { runSession } from '../../../src/workflows/team/engine.js';
import type { TeamEvent } from '../../../src/workflows/team/events.js';
import type { SessionPolicy } from '../../../src/workflows/team/policy.js';
import { packageTeamPromptsPath, parseTeamPrompts } from '../../../src/workflows/team/prompts.js';
import { defaultTeamConfig } from '../../../src/workflows/team/setup.js';
import type { TeamConfig, TeamMessage } from '../../../src/workflows/team/types.js';
import { FakeModelClient, type FakeStep } from '../../support/fake-model-client.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';

export function teamContext(overrides: Partial<TeamConfig> = {}, agents = 3): TeamContext {
  const file = packageTeamPromptsPath(PACKAGE_ROOT);
  return {
    projectRoot: '/nonexistent',
    teamDir: join('/nonexistent', '.team'),
    config: { ...defaultTeamConfig(agents), ...overrides },
    prompts: parseTeamPrompts(readFileSync(file, 'utf8'), file),
    redact: (text) => text,
  };
}

/** What each speaker answers, by name: a list consumed in order (a missing entry: a plain text). */
export type Scripts = Record<string, FakeStep[]>;

/** One FakeModelClient per speaker, so tests can read what each was sent. */
function speakers(scripts: Scripts): {
  clients: Map<string, FakeModelClient>;
  modelFor: (speaker: Speaker) => FakeModelClient;
} {
  const clients = new Map<string, FakeModelClient>();
  const modelFor = (speaker: Speaker): FakeModelClient => {
    let client = clients.get(speaker.name);
    if (client === undefined) {
      const script = scripts[speaker.name] ?? [];
      client = new FakeModelClient(
        (_request: ModelRequest, index: number) => script[index] ?? { text: `${speaker.name} says ${index}` },
        { deltaSize: 5 },
      );
      clients.set(speaker.name, client);
    }
    return client;
  };
  return { clients, modelFor };
}

export async function collectEvents(
  ctx: TeamContext,
  policy: SessionPolicy,
  options: {
    history?: TeamMessage[];
    scripts?: Scripts;
    files?: TeamFileTools | null;
    onTextDelta?: (speaker: string, delta: string) => void;
  },
): Promise<{ events: TeamEvent[]; clients: Map<string, FakeModelClient> }> {
  const { clients, modelFor } = speakers(options.scripts ?? {});
  const ports: SessionPorts = {
    conversation: { readFull: () => Promise.resolve(options.history ?? []) },
    modelFor,
    files: options.files ?? null,
    ...(options.onTextDelta === undefined ? {} : { onTextDelta: options.onTextDelta }),
  };
  const events: TeamEvent[] = [];
  for await (const event of runSession(ctx, policy, ports)) events.push(event);
  return { events, clients };
}

/** The messages a session asks to append, as `from: content`. */
export function appended(events: readonly TeamEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'AppendMessage' ? [`${event.msg.from}: ${event.msg.content}`] : []));
}

export function types(events: readonly TeamEvent[]): string[] {
  return events.filter((event) => event.type !== 'AppendDebug').map((event) => event.type);
}
