/**
 * The replay model client: answers from a cassette (cassette.ts) strictly in order, so whole
 * runs are deterministic without a model. `createRecordingModelClient` (cassette.ts) writes
 * cassettes this client plays.
 */
import { readFileSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { RatchetError, throwIfAborted } from '../core/errors.js';
import type { GenerateOptions, ModelClient, ModelRequest, ModelResponse } from '../core/model.js';
import {
  matchesRequest,
  parseCassette,
  parseCassetteEntries,
  summarizeRequest,
  type CassetteEntry,
  type CassetteEntryInput,
  type CassetteMatch,
} from './cassette.js';

export type ReplayModelClientOptions = (
  { cassettePath: string; entries?: undefined } | { entries: readonly CassetteEntryInput[]; cassettePath?: undefined }
) & {
  /** Reported as `modelId` / `model`; default the cassette header's model, else `replay`. */
  modelId?: string;
  /** Milliseconds clock for `latencyMs`; default `Date.now`. */
  now?: () => number;
  /**
   * Entries already played (by an earlier process of the same run, which `ratchet resume`
   * continues): the first request is matched against entry `startAt + 1`. Default 0.
   */
  startAt?: number;
};

/** A replay client also tells how far it got, for assertions that a cassette was used up. */
export interface ReplayModelClient extends ModelClient {
  /** Entries not yet played. */
  remaining(): number;
  /** Entries played so far, counting `startAt`: where a later process would continue. */
  position(): number;
}

/**
 * Plays cassette entries in order. A request that does not satisfy the next entry's match, or
 * any request after the last entry, throws `replay-mismatch` with a unified diff of the expected
 * match against the request's summary. The cassette is read and validated at creation.
 */
export function createReplayModelClient(options: ReplayModelClientOptions): ReplayModelClient {
  const source = options.cassettePath;
  const { entries, headerModel } =
    source === undefined ? { entries: parseCassetteEntries(options.entries), headerModel: undefined } : load(source);
  const modelId = options.modelId ?? headerModel ?? 'replay';
  const now = options.now ?? Date.now;
  const label = source ?? 'scripted cassette';
  const startAt = options.startAt ?? 0;
  if (!Number.isInteger(startAt) || startAt < 0 || startAt > entries.length) {
    throw new RatchetError(
      'config',
      `Cannot continue replay cassette ${label} after entry #${startAt}: it has ${entries.length} entries.`,
      {
        hint: 'Resume with the cassette the run was started with, or pass another with --cassette.',
      },
    );
  }
  let next = startAt;

  return {
    specificationVersion: 'ratchet-model-v1',
    provider: 'replay',
    modelId,
    remaining: () => entries.length - next,
    position: () => next,
    generate(request: ModelRequest, generateOptions: GenerateOptions = {}): Promise<ModelResponse> {
      const started = now();
      throwIfAborted(generateOptions.signal);
      const index = next;
      const entry = entries[index];
      if (entry === undefined) {
        return Promise.reject(
          mismatch(
            `Replay cassette ${label} is exhausted: request #${index + 1} has no entry (${entries.length} recorded)`,
            undefined,
            request,
            index,
          ),
        );
      }
      if (!matchesRequest(entry.match, request)) {
        return Promise.reject(
          mismatch(`Request #${index + 1} does not match entry #${index + 1} of ${label}`, entry.match, request, index),
        );
      }
      next += 1;
      const response = toResponse(entry, index, modelId);
      if (response.text.length > 0) generateOptions.onTextDelta?.(response.text);
      return Promise.resolve({ ...response, latencyMs: Math.max(0, now() - started) });
    },
  };
}

function load(path: string): { entries: CassetteEntry[]; headerModel: string | undefined } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RatchetError('config', `Cannot read replay cassette ${path}`, {
      cause: error,
      hint: 'Pass an existing NDJSON cassette (record one with a recording client, or write it by hand).',
    });
  }
  const cassette = parseCassette(text, path);
  return { entries: cassette.entries, headerModel: cassette.header?.model };
}

function toResponse(entry: CassetteEntry, index: number, modelId: string): Omit<ModelResponse, 'latencyMs'> {
  const { response } = entry;
  const toolCalls = response.toolCalls.map((call, position) => ({
    id: call.id ?? `call_replay_${index + 1}_${position + 1}`,
    name: call.name,
    input: call.input,
  }));
  return {
    text: response.text,
    toolCalls,
    finishReason: response.finishReason ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop'),
    usage: response.usage ?? { inputTokens: 0, outputTokens: 0 },
    // A scripted answer costs nothing (a recorded one was paid for when it was recorded).
    costUsd: 0,
    model: modelId,
    provider: 'replay',
  };
}

function mismatch(
  headline: string,
  expected: CassetteMatch | undefined,
  request: ModelRequest,
  index: number,
): RatchetError {
  const actual = summarizeRequest(request);
  const patch = createTwoFilesPatch(
    'expected',
    'actual',
    expected === undefined ? '' : `${JSON.stringify(expected, null, 2)}\n`,
    `${JSON.stringify(actual, null, 2)}\n`,
    expected === undefined ? '(no entry left)' : `entry #${index + 1}`,
    `request #${index + 1}`,
  );
  return new RatchetError('replay-mismatch', `${headline}\n${patch}`, {
    hint:
      expected === undefined
        ? 'The cassette has no answer left for this request: record a longer one (--record FILE with a live provider), or continue the run with one (ratchet resume --provider <name> --model <id>).'
        : 'Re-record the cassette, or edit the entry\'s "match" to fit the new request.',
    details: { entryIndex: index, expected, actual },
  });
}
