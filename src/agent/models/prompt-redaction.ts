import type { AgentRuntime } from '../../core/agent.js';
import type { ModelClient, ModelMessage } from '../../core/model.js';
import { redactValue, type Redactor } from '../../core/redact.js';

/**
 * Nothing Ratchet withholds from commands reaches the provider: the values of secret-looking
 * environment variables (`secretsFromEnv`) are removed from every request, whatever carried them
 * there (a test's output fed back, a file the agent read, a tool call the model wrote). Use a
 * redactor made with `shapes: 'none'`: the model sees the project's own text as it is, key-shaped
 * test fixtures included.
 */
export function redactingModelClient(client: ModelClient, redact: Redactor): ModelClient {
  // A conversation's calls resend every earlier message (the same objects, never changed once
  // sent): each is redacted once, not once per call.
  const redacted = new WeakMap<ModelMessage, ModelMessage>();
  const message = (original: ModelMessage): ModelMessage => {
    const known = redacted.get(original);
    if (known !== undefined) return known;
    const fresh = redactMessage(original, redact);
    redacted.set(original, fresh);
    return fresh;
  };
  return {
    specificationVersion: client.specificationVersion,
    provider: client.provider,
    modelId: client.modelId,
    generate: (request, options) =>
      client.generate({ ...request, system: redact(request.system), messages: request.messages.map(message) }, options),
  };
}

function redactMessage(message: ModelMessage, redact: Redactor): ModelMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: redact(message.content) };
    case 'assistant':
      return {
        role: 'assistant',
        text: redact(message.text),
        toolCalls: message.toolCalls.map((call) => ({ ...call, input: redactValue(call.input, redact) })),
      };
    case 'tool':
      return {
        role: 'tool',
        results: message.results.map((result) => ({ ...result, output: redact(result.output) })),
      };
  }
}

/**
 * The same for a runtime that talks to its model itself (the Claude Code CLI): its system prompt
 * and task prompt (feedback with test output included) lose the secrets before it starts.
 */
export function redactingRuntime(runtime: AgentRuntime, redact: Redactor): AgentRuntime {
  return {
    name: runtime.name,
    ...(runtime.guardsWrites === undefined ? {} : { guardsWrites: runtime.guardsWrites }),
    runStage: (request) =>
      runtime.runStage({ ...request, systemPrompt: redact(request.systemPrompt), prompt: redact(request.prompt) }),
  };
}
