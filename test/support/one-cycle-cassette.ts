/**
 * A replay cassette for one TDD cycle, written by hand as a user would: PLAN writes
 * test-list.md with one item and picks it, RED writes its files and stops, GREEN writes its
 * files and stops, REFACTOR changes nothing, and the next PLAN finds every item done.
 */
export interface OneCycle {
  item: string;
  testFile: string;
  implFile: string;
  /** What RED writes (the test, and a stub so it fails on an assertion). */
  red: Record<string, string>;
  /** What GREEN writes. */
  green: Record<string, string>;
}

/** The NDJSON text of the cassette. */
export function oneCycleCassette(cycle: OneCycle): string {
  let ids = 0;
  const entry = (match: object, text: string, calls: Array<[name: string, input: object]>): object => ({
    match,
    response: {
      text,
      toolCalls: calls.map(([name, input]) => ({ id: `toolu_cycle_${String(++ids).padStart(3, '0')}`, name, input })),
      finishReason: calls.length > 0 ? 'tool-calls' : 'stop',
      usage: { inputTokens: 0, outputTokens: 0 },
    },
  });
  const writes = (files: Record<string, string>): Array<[string, object]> =>
    Object.entries(files).map(([file_path, content]) => ['Write', { file_path, content }]);
  const wrote = (files: Record<string, string>): object[] => Object.keys(files).map(() => ({ tool: 'Write' }));
  const { item, testFile, implFile } = cycle;
  const lines = [
    { cassette: 1, description: `one TDD cycle: ${item}`, model: 'scripted-cycle' },
    entry({ stage: 'Stage: PLAN' }, 'The test list first.', [
      ['Write', { file_path: 'test-list.md', content: `# Test list\n\n- [ ] ${item}\n` }],
    ]),
    entry({ stage: 'Stage: PLAN', toolResults: [{ tool: 'Write' }] }, `Next: ${item}.`, [
      ['StructuredOutput', { currentTest: { description: item, testFile, implFile } }],
    ]),
    entry({ stage: 'Stage: RED' }, 'A failing test.', writes(cycle.red)),
    entry({ stage: 'Stage: RED', toolResults: wrote(cycle.red) }, 'It fails on its assertion.', []),
    entry({ stage: 'Stage: GREEN' }, 'The least code that passes.', writes(cycle.green)),
    entry({ stage: 'Stage: GREEN', toolResults: wrote(cycle.green) }, 'Done.', []),
    entry({ stage: 'Stage: REFACTOR' }, 'Nothing to refactor.', []),
    entry({ stage: 'Stage: PLAN' }, 'Every item is done.', [['StructuredOutput', { currentTest: null }]]),
  ];
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}
