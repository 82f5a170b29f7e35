/**
 * The kinds of provider, for code outside `llm/` and `agent/` that must tell them apart (which
 * reads a cassette, which is reached over HTTP) without naming one. No SDK is imported here, so
 * `ratchet status` and the reports can ask without loading them.
 */

/** Providers served by this layer (`claude-code` is an agent runtime, not a model client). */
export type ModelProviderName = 'anthropic' | 'openai' | 'openai-compatible' | 'ollama' | 'replay';
/** Providers reached over HTTP. */
export type HttpProviderName = Exclude<ModelProviderName, 'replay'>;

const HTTP_PROVIDERS: readonly string[] = [
  'anthropic',
  'openai',
  'openai-compatible',
  'ollama',
] satisfies HttpProviderName[];

/** Whether `provider` is reached over HTTP (its endpoint and key can be checked by listing its models). */
export function isHttpProvider(provider: string): provider is HttpProviderName {
  return HTTP_PROVIDERS.includes(provider);
}

/**
 * Whether `provider` plays a recorded or scripted cassette instead of calling a model: its calls
 * cost nothing, and only it reads `--cassette`.
 */
export function replaysCassette(provider: string | null): boolean {
  return provider === 'replay';
}
