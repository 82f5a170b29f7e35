import type { ModelClient, ModelMessage } from '../../core/model.js';
import { STRUCTURED_OUTPUT_TOOL, createStructuredOutput } from '../../agent/structured-output.js';
import type { StructuredAnswer, StructuredModelPort, StructuredRequest } from '../../workflows/tasks/decompose.js';

/** The last JSON value in a reply: a ```json fence first, else the whole text; undefined when none parses. */
function jsonIn(text: string): unknown {
  const fences = [...text.matchAll(/```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  for (const candidate of [...fences.reverse(), text]) {
    try {
      return JSON.parse(candidate.trim()) as unknown;
    } catch {
      // not JSON: try the next candidate
    }
  }
  return undefined;
}

/**
 * A `StructuredModelPort` over a `ModelClient`: one call, with the `StructuredOutput` tool
 * offered (its input schema made from the request's zod schema). The answer is the tool call's
 * input when the model called it, else JSON found in its text, unvalidated: the caller validates
 * and says what is wrong (the tool loop's own validation would hide the problems).
 */
export function structuredModelPort(client: ModelClient): StructuredModelPort {
  return {
    async ask<T>(request: StructuredRequest<T>): Promise<StructuredAnswer> {
      const structured = createStructuredOutput(request.schema);
      const messages: ModelMessage[] = request.messages.map((turn) =>
        turn.role === 'user'
          ? { role: 'user', content: turn.text }
          : { role: 'assistant', text: turn.text, toolCalls: [] },
      );
      const response = await client.generate(
        { system: request.system + structured.systemSuffix, messages, tools: [structured.definition] },
        request.signal === undefined ? {} : { signal: request.signal },
      );
      const call = response.toolCalls.find((toolCall) => toolCall.name === STRUCTURED_OUTPUT_TOOL);
      if (call !== undefined) return { value: call.input, text: JSON.stringify(call.input) };
      return { value: jsonIn(response.text), text: response.text };
    },
  };
}
