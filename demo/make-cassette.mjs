// Writes demo/cassette.ndjson: the scripted model `ratchet demo` replays. Each line answers one
// model call; `match` says which request it expects (the stage line of the system prompt and the
// tool results it follows). Run `node demo/make-cassette.mjs` after changing the script.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ITEMS = [
  'a new stack is empty',
  'push then peek returns the last pushed item',
  'pop returns items in last-in-first-out order',
  'pop on an empty stack throws an error',
];

const HEADER = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Stack } from '../src/stack.js';
`;
const T1 = `
test('a new stack is empty', () => {
  const stack = new Stack();
  assert.equal(stack.isEmpty(), true);
  assert.equal(stack.size, 0);
});
`;
const T2 = `
test('push then peek returns the last pushed item', () => {
  const stack = new Stack();
  stack.push(1);
  stack.push(2);
  assert.equal(stack.peek(), 2);
  assert.equal(stack.size, 2);
});
`;
const T2_WEAK = `
test('push then peek returns the last pushed item', () => {
  const stack = new Stack();
  assert.ok(stack);
});
`;
const T3 = `
test('pop returns items in last-in-first-out order', () => {
  const stack = new Stack();
  stack.push('a');
  stack.push('b');
  stack.push('c');
  assert.equal(stack.pop(), 'c');
  assert.equal(stack.pop(), 'b');
  assert.equal(stack.size, 1);
});
`;
const T4 = `
test('pop on an empty stack throws an error', () => {
  assert.throws(() => new Stack().pop(), /empty/);
});
`;

const impl = (body) =>
  `// A last-in-first-out stack, built test-first by \`ratchet demo\`.\nexport class Stack {\n${body}}\n`;
const STUB1 = impl(`  isEmpty() {
    return false;
  }

  get size() {
    return -1;
  }
`);
const IMPL1 = impl(`  #items = [];

  isEmpty() {
    return this.#items.length === 0;
  }

  get size() {
    return this.#items.length;
  }
`);
const STUB2 = impl(`  #items = [];

  isEmpty() {
    return this.#items.length === 0;
  }

  get size() {
    return this.#items.length;
  }

  push(_item) {}

  peek() {
    return undefined;
  }
`);
const IMPL2 = impl(`  #items = [];

  isEmpty() {
    return this.#items.length === 0;
  }

  get size() {
    return this.#items.length;
  }

  push(item) {
    this.#items.push(item);
  }

  peek() {
    return this.#items[this.#items.length - 1];
  }
`);
const STUB3 = IMPL2.replace('\n}\n', `\n  pop() {\n    return undefined;\n  }\n}\n`);
const IMPL3_WRONG = IMPL2.replace('\n}\n', `\n  pop() {\n    return this.#items.shift();\n  }\n}\n`);
const IMPL3 = IMPL2.replace('\n}\n', `\n  pop() {\n    return this.#items.pop();\n  }\n}\n`);
const REFACTOR3_BROKEN = IMPL3.replace('#items = [];', '#elements = [];').replace(
  'this.#items.push(item)',
  'this.#elements.push(item)',
);
const REFACTOR3 = IMPL3.replace('return this.#items[this.#items.length - 1];', 'return this.#items.at(-1);');
const IMPL4 = REFACTOR3.replace(
  '  pop() {\n    return this.#items.pop();',
  "  pop() {\n    if (this.isEmpty()) throw new Error('cannot pop an empty stack');\n    return this.#items.pop();",
);

const TEST_LIST = `# Test list: a stack with push, pop and peek

${ITEMS.map((item) => `- [ ] ${item}`).join('\n')}
`;

let callId = 0;
const call = (name, input) => ({ id: `toolu_demo_${String(++callId).padStart(3, '0')}`, name, input });
const turn = (stage, after, text, toolCalls = []) => ({
  match: { stage: `Stage: ${stage}`, ...(after ? { toolResults: after.map((tool) => ({ tool })) } : {}) },
  response: {
    text,
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: 0, outputTokens: 0 },
  },
});
const plan = (index, first) => [
  ...(first
    ? [
        turn('PLAN', null, 'I will write the test list first.', [
          call('Write', { file_path: 'test-list.md', content: TEST_LIST }),
        ]),
      ]
    : []),
  turn('PLAN', first ? ['Write'] : null, `Next: ${ITEMS[index]}.`, [
    call('StructuredOutput', {
      currentTest: { description: ITEMS[index], testFile: 'test/stack.test.js', implFile: 'src/stack.js' },
    }),
  ]),
];
const write = (file_path, content) => call('Write', { file_path, content });
const done = (stage, after, text) => turn(stage, after, text);

const lines = [
  {
    cassette: 1,
    description: 'Scripted model for `ratchet demo`: a stack kata in four TDD cycles (no real model is called).',
    model: 'scripted-demo-model',
  },
  // Cycle 1
  ...plan(0, true),
  turn('RED', null, 'A failing test for an empty stack, with a stub so it fails on its assertion.', [
    write('test/stack.test.js', HEADER + T1),
    write('src/stack.js', STUB1),
  ]),
  turn('RED', ['Write', 'Write'], 'Let me run the tests to see the failure.', [call('Bash', { command: 'npm test' })]),
  done('RED', ['Bash'], 'The new test fails on its assertion, as it should.'),
  turn('GREEN', null, 'Keep the items in an array.', [write('src/stack.js', IMPL1)]),
  done('GREEN', ['Write'], 'isEmpty and size now come from the items.'),
  done('REFACTOR', null, 'The code is already minimal and clear: no refactoring needed.'),
  // Cycle 2: the first RED passes immediately and is rejected; RED_FIX writes a real test.
  ...plan(1, false),
  turn('RED', null, 'Add the push/peek test.', [write('test/stack.test.js', HEADER + T1 + T2_WEAK)]),
  done('RED', ['Write'], 'Test added.'),
  turn('RED_FIX', null, 'The test must check what peek returns; stub push and peek so it fails on the assertion.', [
    write('test/stack.test.js', HEADER + T1 + T2),
    write('src/stack.js', STUB2),
  ]),
  done('RED_FIX', ['Write', 'Write'], 'Now the test asserts the peeked value and fails.'),
  turn('GREEN', null, 'Store pushed items and return the last one.', [write('src/stack.js', IMPL2)]),
  done('GREEN', ['Write'], 'push and peek implemented.'),
  done('REFACTOR', null, 'Nothing worth changing yet.'),
  // Cycle 3: the first GREEN is wrong and retried; the first REFACTOR breaks the tests and is rolled back.
  ...plan(2, false),
  turn('RED', null, 'A LIFO test for pop, with a stub pop.', [
    write('test/stack.test.js', HEADER + T1 + T2 + T3),
    write('src/stack.js', STUB3),
  ]),
  done('RED', ['Write', 'Write'], 'The pop test fails on its assertion.'),
  turn('GREEN', null, 'Take items from the front.', [write('src/stack.js', IMPL3_WRONG)]),
  done('GREEN', ['Write'], 'pop implemented.'),
  turn('GREEN', null, 'The test wants last-in-first-out: take from the end.', [write('src/stack.js', IMPL3)]),
  done('GREEN', ['Write'], 'pop now returns the most recent item.'),
  turn('REFACTOR', null, 'Rename items to elements.', [write('src/stack.js', REFACTOR3_BROKEN)]),
  done('REFACTOR', ['Write'], 'Renamed.'),
  turn('REFACTOR', null, 'A smaller change: peek with Array.prototype.at.', [write('src/stack.js', REFACTOR3)]),
  done('REFACTOR', ['Write'], 'peek reads the top with at(-1).'),
  // Cycle 4
  ...plan(3, false),
  turn('RED', null, 'Popping an empty stack must throw.', [write('test/stack.test.js', HEADER + T1 + T2 + T3 + T4)]),
  done('RED', ['Write'], 'The test fails: pop returns undefined instead of throwing.'),
  turn('GREEN', null, 'Guard pop.', [write('src/stack.js', IMPL4)]),
  done('GREEN', ['Write'], 'pop throws on an empty stack.'),
  done('REFACTOR', null, 'No refactoring needed.'),
  // Done
  turn('PLAN', null, 'Every item is checked.', [call('StructuredOutput', { currentTest: null })]),
];

const target = fileURLToPath(new URL('./cassette.ndjson', import.meta.url));
writeFileSync(target, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
process.stdout.write(`wrote ${lines.length - 1} scripted model turns to ${target}\n`);
