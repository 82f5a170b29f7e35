/**
 * The JavaScript project of the end-to-end TDD test and the scripted model that builds it: a
 * small text toolkit tested with `node:test`, linted by a tiny script that rejects `var`.
 *
 * The script walks three test-list items and injects one fault of each kind the loop must
 * survive: a RED test that passes immediately (cycle 1), a wrong first GREEN, a rate-limited
 * (429) request and a REFACTOR that breaks the tests (cycle 2), a GREEN that breaks lint
 * (cycle 3), and a model that repeats the API key. The test itself queues a 529 before the
 * first request.
 */
import type { AnthropicReply } from './fake-anthropic-server.js';
import { bash, edit, planSteps, say, write, type BrainScript, type ScriptStep } from './scripted-brain.js';

export const JS_FEATURE = 'A text toolkit: slugify and truncate';
export const JS_TEST_FILE = 'test/text.test.js';
export const JS_IMPL_FILE = 'src/text.js';

export const JS_ITEMS = [
  'slugify lowercases words and joins them with dashes',
  'slugify drops punctuation',
  'truncate shortens long text and ends it with an ellipsis',
] as const;
const [SLUG, PUNCT, TRUNC] = JS_ITEMS;

const LINT_SCRIPT = `// A tiny linter for the e2e project: no \`var\` declarations under src/ (use const or let).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const problems = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (/\\.[cm]?js$/.test(entry.name)) {
      readFileSync(path, 'utf8')
        .split('\\n')
        .forEach((line, index) => {
          if (/\\bvar /.test(line)) problems.push(\`\${path}:\${index + 1}: use const or let instead of var\`);
        });
    }
  }
};
walk('src');
if (problems.length > 0) {
  console.error(problems.join('\\n'));
  process.exit(1);
}
console.log('lint: ok');
`;

/** The repository's first commit. */
export const JS_PROJECT_FILES: Record<string, string> = {
  'README.md': '# text-kit\n\nSmall text helpers.\n',
  'package.json': `${JSON.stringify({ name: 'text-kit', version: '0.1.0', private: true, type: 'module', scripts: { test: 'node --test', lint: 'node scripts/lint.mjs' } }, null, 2)}\n`,
  'scripts/lint.mjs': LINT_SCRIPT,
  'src/version.js': "export const VERSION = '0.1.0';\n",
  'test/version.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION } from '../src/version.js';

test('VERSION is a semantic version', () => {
  assert.match(VERSION, /^\\d+\\.\\d+\\.\\d+$/);
});
`,
  '.ratchet/config.toml': `# Ratchet settings of the e2e project.
[lint]
command = "node scripts/lint.mjs"

[tdd]
refactor = "always"
`,
};

// ---- test file versions ----------------------------------------------------------------------
const HEADER = (names: string): string => `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ${names} } from '../src/text.js';
`;
const T1_WEAK = `
test('${SLUG}', () => {
  assert.ok(slugify('Hello World'));
});
`;
const T1 = `
test('${SLUG}', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
  assert.equal(slugify('  Ratchet  Only Moves Forward '), 'ratchet-only-moves-forward');
});
`;
const T2 = `
test('${PUNCT}', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
});
`;
const T3 = `
test('${TRUNC}', () => {
  assert.equal(truncate('Ratchet only moves forward', 10), 'Ratchet o…');
  assert.equal(truncate('short', 10), 'short');
});
`;

// ---- implementation versions -----------------------------------------------------------------
const STUB_1 = 'export function slugify(text) {\n  return text;\n}\n';
const IMPL_1 = "export function slugify(text) {\n  return text.trim().toLowerCase().split(/\\s+/).join('-');\n}\n";
const SLUGIFY_BODY = "export function slugify(text) {\n  return words(text).join('-');\n}\n";
const REFACTORED_1 = `const words = (text) => text.trim().toLowerCase().split(/\\s+/);\n\n${SLUGIFY_BODY}`;
const WRONG_2 = `const words = (text) => text.trim().toLowerCase().replace(/,/g, '').split(/\\s+/);\n\n${SLUGIFY_BODY}`;
const WORDS_2 =
  "const words = (text) =>\n  text\n    .toLowerCase()\n    .replace(/[^\\p{L}\\p{N}\\s]/gu, '')\n    .trim()\n    .split(/\\s+/);\n";
const IMPL_2 = `${WORDS_2}\n${SLUGIFY_BODY}`;
/** Renames the helper but not its caller: every slugify test fails with a ReferenceError. */
const BROKEN_REFACTOR_2 = IMPL_2.replace('const words =', 'const toWords =');
const STUB_3 = 'export function truncate(text, _limit) {\n  return text;\n}\n';
const VAR_3 =
  'export function truncate(text, limit) {\n  if (text.length <= limit) return text;\n  var head = text.slice(0, limit - 1);\n  return `${head}…`;\n}\n';

/** The implementation file at the end of the run. */
export const JS_FINAL_IMPL = `${IMPL_2}\n${VAR_3.replace('var head', 'const head')}`;

const rateLimited: AnthropicReply = { kind: 'error', status: 429, headers: { 'retry-after': '1' } };

/**
 * The script. `leakedKey` is repeated by the model in its last REFACTOR answer, as a model that
 * saw a key in some file might: the ledger must still never store it.
 */
export function javascriptScript(leakedKey: string): BrainScript {
  const steps: ScriptStep[] = [
    ...planSteps(
      'a text toolkit',
      JS_ITEMS.map((text) => ({ text, testFile: JS_TEST_FILE, implFile: JS_IMPL_FILE })),
    ),

    // Cycle 1: the first RED test asserts nothing new and passes at once; RED_FIX tightens it.
    {
      stage: 'RED',
      test: SLUG,
      why: 'a RED whose test passes immediately',
      turns: [
        say(
          'A test for slugify, with a stub so it loads.',
          write(JS_TEST_FILE, HEADER('slugify') + T1_WEAK),
          write(JS_IMPL_FILE, STUB_1),
        ),
        say('Let me run the tests.', bash('npm test')),
      ],
    },
    {
      stage: 'RED_FIX',
      test: SLUG,
      attempt: 2,
      why: 'RED_FIX tightens the assertion (the stub from RED stays)',
      turns: [say('The test must check the slug itself.', write(JS_TEST_FILE, HEADER('slugify') + T1))],
    },
    {
      stage: 'GREEN',
      test: SLUG,
      turns: [say('Lower-case, split on spaces, join with dashes.', write(JS_IMPL_FILE, IMPL_1))],
    },
    {
      stage: 'REFACTOR',
      test: SLUG,
      why: 'a REFACTOR that is kept',
      turns: [say('Extract the word splitting into a helper.', edit(JS_IMPL_FILE, IMPL_1, REFACTORED_1))],
    },

    // Cycle 2: the first GREEN is wrong; the second one is rate-limited once, then right. The
    // first REFACTOR breaks the tests and is rolled back; the second changes nothing.
    {
      stage: 'RED',
      test: PUNCT,
      turns: [say('A test for punctuation.', write(JS_TEST_FILE, HEADER('slugify') + T1 + T2))],
    },
    {
      stage: 'GREEN',
      test: PUNCT,
      why: 'a wrong first GREEN',
      turns: [say('Remove commas.', write(JS_IMPL_FILE, WRONG_2))],
    },
    {
      stage: 'GREEN',
      test: PUNCT,
      attempt: 2,
      why: 'GREEN attempt 2, after one 429 with retry-after: 1',
      failFirst: { reply: rateLimited },
      turns: [say('Drop everything that is not a letter, digit or space.', write(JS_IMPL_FILE, IMPL_2))],
    },
    {
      stage: 'REFACTOR',
      test: PUNCT,
      why: 'a REFACTOR that breaks the tests',
      turns: [say('Rename the helper to toWords.', write(JS_IMPL_FILE, BROKEN_REFACTOR_2))],
    },
    {
      stage: 'REFACTOR',
      test: PUNCT,
      attempt: 2,
      why: 'REFACTOR attempt 2 changes nothing',
      turns: [say('The code is clear as it is; no refactoring.')],
    },

    // Cycle 3: GREEN passes the tests with `var`, VERIFY's lint fails, FIX repairs it.
    {
      stage: 'RED',
      test: TRUNC,
      turns: [
        say(
          'A test for truncate, and a stub.',
          write(JS_TEST_FILE, HEADER('slugify, truncate') + T1 + T2 + T3),
          edit(JS_IMPL_FILE, SLUGIFY_BODY, `${SLUGIFY_BODY}\n${STUB_3}`),
        ),
        say('What does my shell see?', bash('env | sort')),
      ],
    },
    {
      stage: 'GREEN',
      test: TRUNC,
      why: 'a GREEN that breaks lint',
      turns: [say('Cut and add an ellipsis.', edit(JS_IMPL_FILE, STUB_3, VAR_3))],
    },
    {
      stage: 'FIX',
      test: TRUNC,
      why: 'FIX repairs the lint failure',
      turns: [say('Use const, not var.', edit(JS_IMPL_FILE, 'var head', 'const head'), bash('node scripts/lint.mjs'))],
    },
    {
      stage: 'REFACTOR',
      test: TRUNC,
      why: 'a model that repeats a secret in its answer',
      turns: [say(`Nothing worth changing. (Debug: ANTHROPIC_API_KEY=${leakedKey})`)],
    },
  ];

  return { items: JS_ITEMS, steps };
}
