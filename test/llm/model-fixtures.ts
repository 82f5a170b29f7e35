/** Requests, tools and a fake sleep shared by the llm tests. */
import type { ModelRequest, ToolDefinition } from '../../src/core/model.js';

const readTool: ToolDefinition = {
  name: 'Read',
  description: 'Read a file',
  inputSchema: {
    type: 'object',
    properties: { file_path: { type: 'string' }, offset: { type: 'number' } },
    required: ['file_path'],
  },
};

const bashTool: ToolDefinition = {
  name: 'Bash',
  description: 'Run a command',
  inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};

export function userRequest(content: string, system = 'Stage: RED\nWrite one failing test.'): ModelRequest {
  return { system, messages: [{ role: 'user', content }], tools: [readTool, bashTool], maxOutputTokens: 1024 };
}

/** A sleep that records its delays and returns at once. */
export function recordingSleep(): { delays: number[]; sleep: (ms: number) => Promise<void> } {
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
  };
}

/** Turns off the AI SDK's process warnings (unknown-model notices) for quiet test output. */
export function silenceSdkWarnings(): void {
  globalThis.AI_SDK_LOG_WARNINGS = false;
}

/** Awaits a promise expected to reject and returns the rejection. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
