import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/core/redact.js';
import type { ModelMessage } from '../../src/core/model.js';
import { redactingModelClient } from '../../src/agent/models/prompt-redaction.js';
import { FakeModelClient, text } from '../support/fake-model-client.js';

const SECRET = 'pg-s3cr3t-value-for-prompts';

describe('redactingModelClient', () => {
  it("removes the withheld secrets from every message it sends, and nothing of the project's own text", async () => {
    const fake = new FakeModelClient([text('one'), text('two')]);
    const client = redactingModelClient(fake, createRedactor([SECRET], { shapes: 'none' }));
    const messages: ModelMessage[] = [
      { role: 'user', content: `Fix the test that prints ${SECRET}.` },
      {
        role: 'assistant',
        text: `I saw ${SECRET}`,
        toolCalls: [{ id: 't', name: 'Write', input: { content: SECRET } }],
      },
      {
        role: 'tool',
        results: [
          { toolCallId: 't', toolName: 'Bash', output: `PGPASSWORD=${SECRET} AKIAIOSFODNN7EXAMPLE`, isError: false },
        ],
      },
    ];
    await client.generate({ system: `Stage: GREEN ${SECRET}`, messages, tools: [] });
    await client.generate({
      system: 'Stage: GREEN',
      messages: [...messages, { role: 'user', content: 'again' }],
      tools: [],
    });

    const sent = JSON.stringify(fake.requests);
    expect(sent).not.toContain(SECRET);
    expect(sent).toContain('PGPASSWORD=[REDACTED] AKIAIOSFODNN7EXAMPLE');
    // The caller's conversation is left as it was.
    expect(JSON.stringify(messages)).toContain(SECRET);
  });
});
