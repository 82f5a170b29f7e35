import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keepsTurbofanOff } from '../../src/code/index/optimising-compiler.js';

const MODULE = pathToFileURL(join(import.meta.dirname, '../../src/code/index/optimising-compiler.ts')).href;

describe('OptimisingCompilerPause', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ratchet-optimising-compiler-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * What V8 compiled with TurboFan (`--trace-opt`) in a fresh Node process while a pause started
   * for a machine of `cores` was on, and after it ended: two hot loops, one in each phase.
   */
  async function turbofanCompiles(cores: number): Promise<{ paused: string[]; after: string[] }> {
    const script = join(dir, 'child.mjs');
    await writeFile(
      script,
      `import { OptimisingCompilerPause } from ${JSON.stringify(MODULE)};
function hotA(n) { let s = 0; for (let i = 0; i < 20; i++) s = (s + i * n) | 0; return s; }
function runA() { let t = 0; for (let i = 0; i < 400000; i++) t = (t + hotA(i)) | 0; return t; }
function hotB(n) { let s = 0; for (let i = 0; i < 20; i++) s = (s + i * n) | 0; return s; }
function runB() { let t = 0; for (let i = 0; i < 400000; i++) t = (t + hotB(i)) | 0; return t; }
const pause = OptimisingCompilerPause.start(${cores});
runA();
pause[Symbol.dispose]();
console.log('--- ended');
runB();
`,
    );
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--trace-opt', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const [paused = '', after = ''] = output.split('--- ended');
    const compiled = (text: string): string[] =>
      [...text.matchAll(/completed compiling .*<JSFunction (\w+) .*\(target TURBOFAN/g)].map((match) => match[1] ?? '');
    return { paused: compiled(paused), after: compiled(after) };
  }

  it('keeps TurboFan off on two cores while the build runs, and lets it compile again after', async () => {
    const { paused, after } = await turbofanCompiles(2);
    expect(paused.filter((name) => /^(?:hot|run)A$/.test(name))).toEqual([]);
    // The loop, its callee, or both (TurboFan may inline the callee into the loop).
    expect(after.filter((name) => /^(?:hot|run)B$/.test(name))).not.toEqual([]);
  });

  it('leaves TurboFan alone where cores are plenty', async () => {
    const { paused } = await turbofanCompiles(8);
    expect(paused.filter((name) => /^(?:hot|run)A$/.test(name))).not.toEqual([]);
  });
});

describe('keepsTurbofanOff', () => {
  const first = { cores: 2, nodeOptions: '', earlierBuilds: 0 };

  it('holds for the first build of a process on at most two cores', () => {
    expect(keepsTurbofanOff(first)).toBe(true);
    expect(keepsTurbofanOff({ ...first, cores: 1 })).toBe(true);
    expect(keepsTurbofanOff({ ...first, cores: 4 })).toBe(false);
    expect(keepsTurbofanOff({ ...first, earlierBuilds: 1 })).toBe(false);
  });

  it('leaves tiering options given to Node to the user', () => {
    for (const option of ['--max-opt=3', '--max_opt=2', '--turbofan', '--no-turbofan', '--no-opt'])
      expect(keepsTurbofanOff({ ...first, nodeOptions: `--enable-source-maps ${option}` }), option).toBe(false);
    expect(keepsTurbofanOff({ ...first, nodeOptions: '--optimize-for-size --max-semi-space-size=16' })).toBe(true);
  });
});
