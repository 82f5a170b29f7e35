/**
 * What the process runner and the bubblewrap sandbox offer the Claude Code CLI besides a command
 * line: texts on extra inherited descriptors (a credential kept out of the environment) and a
 * sandbox without network (a loopback interface of its own). Needs bwrap (`.ci/run` installs it;
 * skipped with the reason without it).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { createSandboxedRunner, type SandboxLayout } from '../../src/process/sandbox.js';
import { toolchain } from '../support/toolchains.js';

/** A sandbox whose only writable place is a private /tmp, with or without network. */
function layout(network: boolean): SandboxLayout {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-sandbox-options-'));
  return {
    hide: [],
    hideFiles: [],
    mounts: [],
    tmp: dir,
    shm: dir,
    empty: '/dev/null',
    network,
    limits: { processes: 4096, fileSizeBytes: 2 ** 30, memoryBytes: 2 ** 32, minFreeDiskBytes: 0 },
    nproc: 4096,
    watchDisks: [],
  };
}

const sandboxed = (network: boolean) =>
  createSandboxedRunner(createProcessRunner(), layout(network), { home: homedir() });

const bwrap = toolchain('bwrap');

describe.skipIf(bwrap.missing)(`the process runner and the sandbox for the Claude Code CLI${bwrap.note}`, () => {
  it('hands texts to descriptors 3, 4, ... and not to the environment, in the sandbox too', async () => {
    for (const runner of [createProcessRunner(), sandboxed(false)]) {
      const result = await runner.run({
        command: 'read -r first <&3; read -r second <&4; echo "$first|$second"; env | grep -c secret-text || true',
        cwd: tmpdir(),
        descriptorInputs: ['secret-text-one\n', 'secret-text-two\n'],
        timeoutMs: 10_000,
      });
      expect(result.exitCode, result.output).toBe(0);
      expect(result.stdout).toBe('secret-text-one|secret-text-two\n0\n');
    }
  });

  it('gives a command without network only a loopback interface: a server on the host is out of reach', async ({
    onTestFinished,
  }) => {
    const server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const fetchIt = `node -e "fetch('http://127.0.0.1:${port}/').then(r => r.text()).then(t => console.log(t), e => console.log('unreachable', e.cause?.code ?? e.message))"`;
    const run = (network: boolean) =>
      sandboxed(network).run({
        command: `${fetchIt}; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`,
        cwd: tmpdir(),
        timeoutMs: 20_000,
      });

    const isolated = await run(false);
    const connected = await run(true);

    expect(isolated.stdout).toBe('unreachable ECONNREFUSED\nlo\n');
    expect(connected.stdout.split('\n')[0]).toBe('reached');
  });
});
