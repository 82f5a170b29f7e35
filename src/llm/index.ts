/** The model layer: provider adapters, retries, prices and replay cassettes (see DESIGN.md). */
export { createAiSdkModelClient, toSdkMessages, toSdkTools } from './ai-sdk-client.js';
export type { AiSdkLanguageModel, AiSdkModelClientOptions } from './ai-sdk-client.js';
export {
  cassetteEntrySchema,
  cassetteHeaderSchema,
  cassetteMatchSchema,
  createRecordingModelClient,
  deriveMatch,
  matchesRequest,
  parseCassette,
  parseCassetteEntries,
  recordEntry,
  serializeCassetteLine,
  summarizeRequest,
} from './cassette.js';
export type {
  Cassette,
  CassetteEntry,
  CassetteEntryInput,
  CassetteHeader,
  CassetteMatch,
  RecordingOptions,
} from './cassette.js';
export { costUsd, MODEL_PRICES, priceOf } from './pricing.js';
export type { ModelPrice } from './pricing.js';
export { parseRetryAfterMs, toProviderError } from './provider-errors.js';
export type { ProviderErrorContext } from './provider-errors.js';
export { createModelClient, ollamaBaseUrl, resolveEndpoint } from './providers.js';
export type {
  CreateModelClientOptions,
  Environment,
  HttpProviderName,
  ModelProviderName,
  ResolvedEndpoint,
  ResolveEndpointOptions,
} from './providers.js';
export { createReplayModelClient } from './replay.js';
export type { ReplayModelClient, ReplayModelClientOptions } from './replay.js';
export { MAX_RETRY_DELAY_MS, retryDelayMs, withRetry } from './retry.js';
export type { RetryInfo, RetryOptions } from './retry.js';
