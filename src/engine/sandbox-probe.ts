/**
 * `ratchet doctor`'s sandbox checks: what the sandbox enforces here, found by trying (writes,
 * reads, network, processes, privileges, limits) from inside a sandbox made as a run's is, around
 * a throwaway checkout, worktree and `$RATCHET_HOME` with planted files.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { ResolvedConfig } from '../config/resolved.js';
import type { ProcessRunner } from '../process/types.js';
import { createSandboxArea, removeSandboxArea, userHome } from './sandbox-host.js';
import { sandboxFactory, sandboxUnavailable } from './tool-sandbox.js';

export interface SandboxProbe {
  /** What was tried. */
  name: 'writes' | 'reads' | 'dependencies' | 'network' | 'processes' | 'privileges' | 'limits';
  ok: boolean;
  detail: string;
}

/** Runs inside the sandbox with Node.js: every attempt, as JSON. */
const PROBE_SCRIPT = `
const fs = require('node:fs'), net = require('node:net'), cp = require('node:child_process');
const [checkout, home, port] = [process.argv[1], process.argv[2], Number(process.argv[3])];
const tries = (fn) => { try { fn(); return true; } catch { return false; } };
const out = {};
out.wroteCheckout = tries(() => fs.writeFileSync(checkout + '/planted.txt', 'x'));
out.wroteHome = tries(() => fs.writeFileSync(home + '/planted.txt', 'x'));
out.wroteUserHome = tries(() => fs.writeFileSync(process.env.HOME + '/.ratchet-doctor-planted', 'x'));
out.wroteTmp = tries(() => fs.writeFileSync('/tmp/ratchet-doctor-planted', 'x'));
out.readCheckout = tries(() => fs.readFileSync(checkout + '/.env'));
out.readHome = tries(() => fs.readFileSync(home + '/secret.txt'));
out.userHome = tries(() => fs.readdirSync(process.env.HOME)) ? fs.readdirSync(process.env.HOME) : [];
out.readDependency = tries(() => fs.readFileSync(checkout + '/node_modules/x/index.js'));
out.wroteDependency = tries(() => fs.writeFileSync(checkout + '/node_modules/x/index.js', 'planted'));
out.processes = fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name)).length;
out.capEff = (fs.readFileSync('/proc/self/status', 'utf8').match(/CapEff:\\s*(\\w+)/) || [])[1];
out.remounted = cp.spawnSync('mount', ['-o', 'remount,rw', '/'], { stdio: 'ignore' }).status === 0;
const status = (name) => (fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith(name)) || '').split(/\\s{2,}/)[1];
out.limits = { processes: status('Max processes'), fileSize: status('Max file size'), data: status('Max data size') };
out.sshAgent = process.env.SSH_AUTH_SOCK !== undefined;
const socket = net.connect({ host: '127.0.0.1', port });
const done = (connected) => { out.connected = connected; socket.destroy(); console.log(JSON.stringify(out)); };
socket.on('connect', () => done(true));
socket.on('error', () => done(false));
setTimeout(() => done(false), 2000);
`;

const ProbeOutputSchema = z.object({
  wroteCheckout: z.boolean(),
  wroteHome: z.boolean(),
  wroteUserHome: z.boolean(),
  wroteTmp: z.boolean(),
  readCheckout: z.boolean(),
  readHome: z.boolean(),
  userHome: z.array(z.string()),
  readDependency: z.boolean(),
  wroteDependency: z.boolean(),
  processes: z.number(),
  capEff: z.string().optional(),
  remounted: z.boolean(),
  limits: z.object({
    processes: z.string().optional(),
    fileSize: z.string().optional(),
    data: z.string().optional(),
  }),
  sshAgent: z.boolean(),
  connected: z.boolean(),
});

/** A loopback listener on the host, which counts the connections that reached it. */
async function listener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    connections: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Tries everything a model would from inside a sandbox made as a run's is. Empty when the user
 * opted out (`[bash] sandbox = "off"`); one failed probe when no sandbox can be made here.
 */
export async function probeSandbox(config: ResolvedConfig, runner: ProcessRunner): Promise<SandboxProbe[]> {
  const problem = await sandboxUnavailable(config, runner);
  if (problem !== undefined) return [{ name: 'writes', ok: false, detail: `no sandbox can be made here: ${problem}` }];
  const root = await mkdtemp(join(tmpdir(), 'ratchet-doctor-'));
  const server = await listener();
  try {
    const checkout = join(root, 'checkout');
    const home = join(root, 'ratchet-home');
    const worktree = join(home, 'worktrees', 'doctor');
    await mkdir(join(checkout, 'node_modules', 'x'), { recursive: true });
    await writeFile(join(checkout, '.env'), 'SECRET=doctor\n');
    await writeFile(join(checkout, 'node_modules', 'x', 'index.js'), 'module.exports = 1;\n');
    await mkdir(worktree, { recursive: true });
    await writeFile(join(home, 'secret.txt'), 'secret\n');
    const probeConfig = { ...config, home };
    const area = await createSandboxArea(home, 'doctor');
    try {
      const { factory, layout } = await sandboxFactory(
        probeConfig,
        runner,
        { protect: [checkout], worktree, dependenciesOf: checkout, programs: [process.execPath] },
        area,
      );
      const result = await factory({}).run({
        command: process.execPath,
        args: ['-e', PROBE_SCRIPT, checkout, home, String(server.port)],
        shell: false,
        cwd: worktree,
        timeoutMs: 30_000,
      });
      const line = result.stdout.trim().split('\n').pop() ?? '';
      let parsed: z.infer<typeof ProbeOutputSchema>;
      try {
        parsed = ProbeOutputSchema.parse(JSON.parse(line));
      } catch {
        return [
          {
            name: 'writes',
            ok: false,
            detail: `the probe did not run in the sandbox: ${result.output.trim().slice(-300)}`,
          },
        ];
      }
      const plantedOnHost =
        existsSync(join(checkout, 'planted.txt')) ||
        existsSync(join(home, 'planted.txt')) ||
        existsSync(join(userHome(), '.ratchet-doctor-planted')) ||
        existsSync('/tmp/ratchet-doctor-planted') ||
        (await readFile(join(checkout, 'node_modules', 'x', 'index.js'), 'utf8')) !== 'module.exports = 1;\n';
      const processLimit =
        layout.pidsCgroup !== undefined
          ? 'a pids cgroup'
          : process.getuid?.() === 0
            ? 'a watchdog (root, no writable pids cgroup)'
            : 'RLIMIT_NPROC';
      return judge(parsed, plantedOnHost, server.connections() > 0, config, processLimit);
    } finally {
      await removeSandboxArea(area);
    }
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
}

function judge(
  seen: z.infer<typeof ProbeOutputSchema>,
  plantedOnHost: boolean,
  reached: boolean,
  config: ResolvedConfig,
  processLimit: string,
): SandboxProbe[] {
  const limits = config.bash.limits;
  const mib = 2 ** 20;
  const wrote = seen.wroteCheckout || seen.wroteHome || seen.wroteUserHome || plantedOnHost;
  const networkOn = config.bash.network === 'on';
  const expected = {
    processes: String(limits.processes),
    fileSize: String(limits.fileSizeMb * mib),
    data: String(limits.memoryMb * mib),
  };
  const limitsOk =
    seen.limits.fileSize === expected.fileSize &&
    seen.limits.data === expected.data &&
    seen.limits.processes !== undefined &&
    seen.limits.processes !== 'unlimited';
  const shownHome = seen.userHome.length === 0 ? 'nothing' : seen.userHome.join(', ');
  return [
    {
      name: 'writes',
      ok: !wrote && seen.wroteTmp,
      detail: wrote
        ? 'a write outside the worktree reached the host'
        : 'only the worktree and a private /tmp are writable (checkout, $RATCHET_HOME, home, host /tmp refused)',
    },
    {
      name: 'reads',
      ok: !seen.readCheckout && !seen.readHome,
      detail:
        seen.readCheckout || seen.readHome
          ? `a planted file was readable (${seen.readCheckout ? "the checkout's .env" : '$RATCHET_HOME'})`
          : `the checkout and $RATCHET_HOME are hidden; of your home it sees: ${shownHome}`,
    },
    {
      name: 'dependencies',
      ok: seen.readDependency && !seen.wroteDependency,
      detail: seen.wroteDependency
        ? 'node_modules was writable'
        : seen.readDependency
          ? 'node_modules and .venv are readable, not writable'
          : 'node_modules was not readable',
    },
    {
      name: 'network',
      ok: networkOn || (!seen.connected && !reached && !seen.sshAgent),
      detail: networkOn
        ? 'on ([bash] network = "on"): commands reach the network'
        : seen.connected || reached
          ? 'a connection reached a listener on the host'
          : 'no network (a loopback listener on the host was unreachable), no SSH agent',
    },
    {
      name: 'processes',
      ok: seen.processes < 10,
      detail:
        seen.processes < 10
          ? `a PID namespace of its own (${seen.processes} processes visible)`
          : `${seen.processes} processes visible: no PID namespace`,
    },
    {
      name: 'privileges',
      ok: /^0+$/.test(seen.capEff ?? '') && !seen.remounted,
      detail:
        /^0+$/.test(seen.capEff ?? '') && !seen.remounted
          ? 'no capabilities (CapEff 0); remounting / refused'
          : `capabilities ${seen.capEff ?? '?'}${seen.remounted ? ', and / could be remounted' : ''}`,
    },
    {
      name: 'limits',
      ok: limitsOk,
      detail: limitsOk
        ? `applied: ${limits.processes} processes (${processLimit}), ${limits.fileSizeMb} MiB per file, ${limits.memoryMb} MiB of memory; stopped below ${limits.minFreeDiskMb} MiB free disk`
        : `not applied (prlimit missing?): processes ${seen.limits.processes ?? '?'}, file size ${seen.limits.fileSize ?? '?'}, data ${seen.limits.data ?? '?'}`,
    },
  ];
}
