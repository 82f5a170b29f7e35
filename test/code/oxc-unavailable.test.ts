import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Where oxc-parser's native binding cannot load (a platform it ships none for; here its loader is
 * pointed at a binding that does not exist), the analyses that read JavaScript with it degrade as
 * they say instead of failing every command that imports them: the test review fails internally
 * (its circuit breaker counts that), the size check measures lines only.
 */
const TEST_QUALITY = resolve('src/code/test-quality.ts');
const METRICS = resolve('src/code/metrics.ts');

describe('the JavaScript analyses where oxc-parser cannot load', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ratchet-oxc-unavailable-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('make the review fail internally and the size check count lines only; Python is still reviewed', async () => {
    const script = join(dir, 'child.mjs');
    await writeFile(
      script,
      `import { reviewTestQuality } from ${JSON.stringify(TEST_QUALITY)};
import { measureCode } from ${JSON.stringify(METRICS)};
const text = "import { test } from 'node:test';\\nimport { add } from '../src/add.js';\\ntest('adds', () => { add(1, 2); });\\n";
const review = await reviewTestQuality({ testFile: 'test/add.test.js', implFile: 'src/add.js', text, before: null }).then(
  (findings) => ({ findings }),
  (error) => ({ error: error.message, code: error.code }),
);
const python = await reviewTestQuality({ testFile: 'tests/test_add.py', implFile: 'src/add.py', text: 'from add import add\\n\\ndef test_adds():\\n    add(1, 2)\\n', before: null });
const metrics = await measureCode('src/add.ts', 'export function add(a: number, b: number): number {\\n  return a + b;\\n}\\n');
console.log(JSON.stringify({ review, python: python.map((finding) => finding.rule), metrics }));
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', NAPI_RS_NATIVE_LIBRARY_PATH: join(dir, 'no-such-binding.node') },
    });
    const result: unknown = JSON.parse(stdout);
    expect(result).toEqual({
      review: {
        error: expect.stringMatching(/^The test review could not load oxc-parser: .*native binding/) as unknown,
        code: 'internal',
      },
      python: ['no-assertion'],
      metrics: { language: null, lines: 3, hasErrors: false, functions: [], classes: [] },
    });
  });
});
