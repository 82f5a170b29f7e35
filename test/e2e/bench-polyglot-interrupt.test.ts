/**
 * `ratchet bench polyglot` interrupted for real: SIGINT while the second exercise's model call is
 * held. The CLI exits 130 saying how to continue, starts no exercise after the signal (the third
 * stays queued), and leaves the finished exercise's record only; the same command then skips that
 * exercise, runs the other two, and its summary counts all three.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecords } from '../../src/bench/polyglot/results.js';
import { E2E_API_KEY } from '../support/e2e-run.js';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createPolyglotBrain, POLYGLOT_FIXTURE } from '../support/polyglot-brain.js';
import { CLI, cliEnv, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const tools = toolchain('go', 'pytest', 'cargo');
const sandbox = sandboxForThisMachine();

describe.skipIf(tools.missing)(`ratchet bench polyglot interrupted and resumed${tools.note}${sandbox.note}`, () => {
  it('stops at SIGINT without starting another exercise, and the same command finishes the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratchet-polyglot-interrupt-'));
    const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    const brain = createPolyglotBrain();
    let hold = true;
    // Leap's calls wait while `hold`: the run is inside the second exercise when SIGINT comes.
    server.setFallback((request) => {
      const reply = brain.reply(request);
      const leap = brain.calls.at(-1)?.exercise === 'leap';
      return hold && leap && reply.kind === 'message' ? { ...reply, delayMs: 20_000 } : reply;
    });
    const out = join(dir, 'out');
    const args = [
      'bench',
      'polyglot',
      POLYGLOT_FIXTURE,
      '--languages',
      'go,python,rust',
      '--workers',
      '1',
      '--tries',
      '1',
      '--provider',
      'anthropic',
      '--model',
      'claude-opus-4-5',
      '--out',
      out,
      ...sandbox.flags,
    ];
    const env = { RATCHET_HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: E2E_API_KEY };
    try {
      const first = await new Promise<{ code: number | null; text: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: cliEnv(env), stdio: 'pipe' });
        let text = '';
        const poll = setInterval(() => {
          if (brain.calls.some((call) => call.exercise === 'leap')) {
            clearInterval(poll);
            child.kill('SIGINT');
          }
        }, 100);
        child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.on('close', (code) => {
          clearInterval(poll);
          resolve({ code, text });
        });
      });
      hold = false;
      expect(first.code, first.text).toBe(130);
      expect(first.text).toContain(`Interrupted; continue with the same command and --out ${out}`);
      expect(first.text).toContain('go/hamming: passed at try 1');
      // Nothing starts after the signal, and the interrupted exercise leaves no record.
      expect(first.text.split('SIGINT')[1]).not.toMatch(/: started/);
      expect(readdirSync(join(out, 'exercises'), { recursive: true }).sort()).toEqual(['go', 'go/hamming.json']);

      const callsBefore = brain.calls.length;
      const second = await runCli(args, { cwd: dir, env, timeoutMs: 300_000 });
      expect(second.exitCode, `${second.stdout}\n${second.stderr}`).toBe(0);
      expect(second.stdout).toContain('go/hamming: finished before (passed at try 1)');
      expect(brain.calls.slice(callsBefore).map((call) => call.exercise)).toEqual([
        'leap',
        'leap',
        'raindrops',
        'raindrops',
      ]);
      const records = await readRecords(out);
      expect(records.map((record) => [record.exercise, record.status, record.passedAtTry])).toEqual([
        ['hamming', 'completed', 1],
        ['leap', 'completed', 1],
        ['raindrops', 'completed', 1],
      ]);
      expect(second.stdout).toMatch(/^all\s+3\s+100%/m);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
