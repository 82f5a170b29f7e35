/**
 * The team's model and tool calls as ledger events (`model-call`, `tool-call`), like every other
 * workflow's, so that `ratchet history`, `report` and their costs show an iteration. The team
 * does not run through the shared lifecycle, so the front ends give it a `TeamRecord` (the
 * engine's recorder of the iteration's ledger run: engine/team/iteration-ledger.ts) and these
 * wrappers feed it: every speaker's and extraction's client, whose stage is the `Stage:` line
 * its system prompt starts with, and the agents' file tools (stage `AGENT`). Without a record
 * nothing is wrapped.
 */
import type { EventInput } from '../../core/events.js';
import { toRatchetError } from '../../core/errors.js';
import type { ModelClient } from '../../core/model.js';
import { TEAM_STAGES, type TeamStage } from '../../core/stages.js';
import type { Speaker, TeamFileTools } from './context.js';

/** Records one event of the iteration in the ledger. */
export type TeamRecord = (event: EventInput) => Promise<void>;

/** The team stage a system prompt names in its first line (`Stage: COACH`), else null. */
function teamStageOf(system: string): TeamStage | null {
  const name = /^\s*Stage: (\w+)/.exec(system)?.[1];
  return TEAM_STAGES.find((stage) => stage === name) ?? null;
}

/** `client`, each call (answered or failed) recorded as a `model-call` of its prompt's stage. */
function recordingModel(client: ModelClient, record: TeamRecord): ModelClient {
  return {
    specificationVersion: client.specificationVersion,
    provider: client.provider,
    modelId: client.modelId,
    async generate(request, options) {
      const base = { stage: teamStageOf(request.system), provider: client.provider, model: client.modelId, request };
      const started = Date.now();
      let response;
      try {
        response = await client.generate(request, options);
      } catch (error) {
        const failure = toRatchetError(error);
        await record({
          type: 'model-call',
          ...base,
          response: null,
          error: { code: failure.code, message: failure.message },
          latencyMs: Date.now() - started,
        });
        throw error;
      }
      await record({ type: 'model-call', ...base, response, error: null, latencyMs: response.latencyMs });
      return response;
    },
  };
}

/** Each speaker's client, recording (see `recordingModel`). */
export function recordingModels(
  modelFor: (speaker: Speaker) => ModelClient,
  record: TeamRecord | undefined,
): (speaker: Speaker) => ModelClient {
  return record === undefined ? modelFor : (speaker) => recordingModel(modelFor(speaker), record);
}

/** The agents' file tools, each call recorded as a `tool-call` of stage `AGENT`. */
export function recordingFiles(files: TeamFileTools, record: TeamRecord | undefined): TeamFileTools {
  if (record === undefined) return files;
  return {
    async execute(agentName, call, signal) {
      const started = Date.now();
      const outcome = await files.execute(agentName, call, signal);
      await record({
        type: 'tool-call',
        stage: 'AGENT',
        tool: call.name,
        input: call.input,
        output: outcome.output,
        isError: outcome.isError,
        durationMs: Date.now() - started,
      });
      return outcome;
    },
  };
}
