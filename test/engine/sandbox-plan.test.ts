/**
 * The sandbox as data: which places a sandboxed command sees (`planSandbox`), the bubblewrap
 * command line they become (`bwrapArgs`), its environment (`sandboxEnv`), RLIMIT_NPROC
 * (`nprocLimit`) and the git configuration it reads (`sanitizeGitConfig`). Pure functions over
 * made-up hosts; `test/security/` attacks the real thing.
 */
import { describe, expect, it } from 'vitest';
import { bwrapArgs, nprocLimit, sandboxEnv, type SandboxLayout } from '../../src/process/sandbox-args.js';
import { planSandbox, toolchainRoot, type SandboxPlanInput } from '../../src/engine/sandbox-plan.js';
import { sanitizeGitConfig } from '../../src/engine/sandbox-git-config.js';

const same = (path: string) => ({ path, real: path });

function input(overrides: Partial<SandboxPlanInput> = {}): SandboxPlanInput {
  return {
    homes: ['/home/ann'],
    system: ['/root', '/home', '/run', '/mnt'],
    hostTmp: ['/tmp'],
    protect: [same('/home/ann/code/app')],
    ratchetHome: same('/home/ann/.ratchet'),
    worktree: same('/home/ann/.ratchet/worktrees/r1'),
    gitCommonDir: same('/home/ann/code/app/.git'),
    gitConfigCopy: '/home/ann/.ratchet/tmp/r1.7/git-config',
    worktreeGit: true,
    dependencies: [same('/home/ann/code/app/node_modules')],
    programDirs: [
      same('/home/ann/.cargo/bin'),
      same('/home/ann/.pyenv/shims'),
      same('/home/ann/.local/bin'),
      same('/home/ann/bin'),
      same('/usr/local/bin'),
      same('/tmp/fake-tools/bin'),
      { path: '/home/ann/.tools/node/bin', real: '/opt/node-24/bin' },
      same('/home/ann/code/app/node_modules/.bin'),
    ],
    toolchainHomes: [same('/home/ann/.rustup'), same('/home/ann/.cargo'), same('/home/ann/go')],
    secretFiles: ['/etc/shadow', '/home/ann/.cargo/credentials.toml'],
    extraMounts: [],
    area: {
      tmp: '/home/ann/.ratchet/tmp/r1.7/tmp',
      shm: '/home/ann/.ratchet/tmp/r1.7/shm',
      empty: '/home/ann/.ratchet/tmp/r1.7/empty',
    },
    network: false,
    limits: { processes: 64, fileSizeBytes: 8 * 2 ** 20, memoryBytes: 2 ** 30, minFreeDiskBytes: 2 ** 30 },
    nproc: 64,
    prlimit: '/usr/bin/prlimit',
    ...overrides,
  };
}

/** The mounts of `args` as `[option, source, destination]`, in order. */
function mountSteps(args: readonly string[]): string[][] {
  const steps: string[][] = [];
  for (let index = 0; index < args.length; index++) {
    const option = args[index] ?? '';
    if (option === '--bind' || option === '--ro-bind') {
      steps.push([option, args[index + 1] ?? '', args[index + 2] ?? '']);
      index += 2;
    } else if (option === '--tmpfs' || option === '--remount-ro') {
      steps.push([option, args[index + 1] ?? '']);
      index += 1;
    }
  }
  return steps;
}

describe('toolchainRoot', () => {
  const hidden = ['/home/ann', '/root'];
  it('shows the toolchain around a bin or shims folder, but never a home, ~/.local or a temporary directory', () => {
    expect(toolchainRoot('/home/ann/.cargo/bin', hidden, ['/tmp'])).toBe('/home/ann/.cargo');
    expect(toolchainRoot('/home/ann/.pyenv/shims', hidden, ['/tmp'])).toBe('/home/ann/.pyenv');
    expect(toolchainRoot('/home/ann/bin', hidden, ['/tmp'])).toBe('/home/ann/bin');
    expect(toolchainRoot('/home/ann/.local/bin', hidden, ['/tmp'])).toBe('/home/ann/.local/bin');
    expect(toolchainRoot('/tmp/x/bin', hidden, ['/tmp'])).toBe('/tmp/x/bin');
    expect(toolchainRoot('/home/ann/.tools/node', hidden, ['/tmp'])).toBe('/home/ann/.tools/node');
  });
});

describe('planSandbox', () => {
  const layout = planSandbox(input());
  const shown = layout.mounts.filter((mount) => !mount.writable).map((mount) => mount.path);

  it('hides the homes, the shared places, the checkout and $RATCHET_HOME', () => {
    expect(layout.hide).toEqual(
      expect.arrayContaining([
        '/home/ann',
        '/root',
        '/home',
        '/run',
        '/mnt',
        '/home/ann/code/app',
        '/home/ann/.ratchet',
      ]),
    );
    expect(layout.hideFiles).toEqual(['/etc/shadow', '/home/ann/.cargo/credentials.toml']);
  });

  it('shows the toolchains on PATH and in the home read-only, and nothing that holds a home or a checkout', () => {
    expect(shown).toEqual(
      expect.arrayContaining([
        '/home/ann/.cargo',
        '/home/ann/.pyenv',
        '/home/ann/.local/bin',
        '/home/ann/bin',
        '/tmp/fake-tools/bin',
        '/home/ann/.rustup',
        '/home/ann/go',
      ]),
    );
    // Not visible anyway (/usr), or inside the checkout (its dependencies are shown as such).
    expect(shown).not.toContain('/usr/local/bin');
    expect(shown).not.toContain('/home/ann/code/app/node_modules/.bin');
    // Seen where PATH names it, from its real place (visible anyway).
    expect(layout.mounts).toContainEqual({
      path: '/home/ann/.tools/node/bin',
      source: '/opt/node-24/bin',
      writable: false,
    });
    for (const place of ['/home/ann', '/home', '/tmp', '/home/ann/code/app', '/home/ann/.ratchet', '/'])
      expect(shown).not.toContain(place);
  });

  it('makes the worktree the one writable mount, its .git file, the dependencies and the git directory read-only', () => {
    expect(layout.mounts.filter((mount) => mount.writable)).toEqual([
      { path: '/home/ann/.ratchet/worktrees/r1', writable: true },
    ]);
    expect(shown).toEqual(
      expect.arrayContaining([
        '/home/ann/.ratchet/worktrees/r1/.git',
        '/home/ann/code/app/node_modules',
        '/home/ann/code/app/.git',
        '/home/ann/code/app/.git/config',
      ]),
    );
    expect(layout.mounts).toContainEqual({
      path: '/home/ann/code/app/.git/config',
      source: '/home/ann/.ratchet/tmp/r1.7/git-config',
      writable: false,
    });
  });

  it('keeps a checkout inside a toolchain (GOPATH) hidden', () => {
    const gopath = planSandbox(input({ protect: [same('/home/ann/go/src/app')], gitCommonDir: undefined }));
    const steps = mountSteps(bwrapArgs(gopath, { argv: ['true'], cwd: '/' }));
    const go = steps.findIndex((step) => step[2] === '/home/ann/go');
    const checkout = steps.findIndex((step) => step[0] === '--tmpfs' && step[1] === '/home/ann/go/src/app');
    expect(go).toBeGreaterThanOrEqual(0);
    expect(checkout).toBeGreaterThan(go);
  });
});

describe('bwrapArgs', () => {
  const layout: SandboxLayout = planSandbox(input());
  const args = bwrapArgs(layout, {
    argv: ['/bin/sh', '-c', 'npm test'],
    cwd: '/home/ann/.ratchet/worktrees/r1',
    writablePaths: ['/home/ann/.ratchet/tmp/r1.7/scratch/report-1'],
  });
  const steps = mountSteps(args);
  const at = (match: (step: string[]) => boolean): number => steps.findIndex(match);

  it('starts from the read-only host with a fresh /dev and /proc, and mounts shallow paths first', () => {
    expect(args.slice(0, 7)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']);
    // The worktree (writable) lands on the hidden $RATCHET_HOME; its .git file on the worktree.
    const home = at((step) => step[0] === '--tmpfs' && step[1] === '/home/ann');
    const ratchetHome = at((step) => step[0] === '--tmpfs' && step[1] === '/home/ann/.ratchet');
    const worktree = at((step) => step[0] === '--bind' && step[2] === '/home/ann/.ratchet/worktrees/r1');
    const gitFile = at((step) => step[2] === '/home/ann/.ratchet/worktrees/r1/.git');
    const report = at((step) => step[0] === '--bind' && step[2] === '/home/ann/.ratchet/tmp/r1.7/scratch/report-1');
    expect(home).toBeLessThan(ratchetHome);
    expect(ratchetHome).toBeLessThan(worktree);
    expect(worktree).toBeLessThan(gitFile);
    expect(steps[gitFile]?.[0]).toBe('--ro-bind');
    expect(ratchetHome).toBeLessThan(report);
    // The private /tmp, and every hidden tmpfs made read-only once its mount points exist.
    expect(steps[at((step) => step[2] === '/tmp')]).toEqual(['--bind', '/home/ann/.ratchet/tmp/r1.7/tmp', '/tmp']);
    const lastMount = Math.max(...steps.map((step, index) => (step[0] === '--remount-ro' ? -1 : index)));
    for (const hidden of layout.hide)
      expect(at((step) => step[0] === '--remount-ro' && step[1] === hidden)).toBeGreaterThan(lastMount);
    expect(steps).toContainEqual(['--ro-bind', '/home/ann/.ratchet/tmp/r1.7/empty', '/etc/shadow']);
  });

  it('drops every capability in a user namespace of its own, without the network, and limits the command', () => {
    for (const flag of [
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--new-session',
      '--die-with-parent',
      '--unshare-net',
    ])
      expect(args).toContain(flag);
    expect(args.join(' ')).toContain('--cap-drop ALL');
    expect(args.slice(args.indexOf('--chdir'))).toEqual([
      '--chdir',
      '/home/ann/.ratchet/worktrees/r1',
      '--',
      '/usr/bin/prlimit',
      '--nproc=64',
      `--fsize=${8 * 2 ** 20}`,
      `--data=${2 ** 30}`,
      '--core=0',
      '--',
      '/bin/sh',
      '-c',
      'npm test',
    ]);
    expect(bwrapArgs({ ...layout, network: true }, { argv: ['true'], cwd: '/' })).not.toContain('--unshare-net');
  });
});

describe('sandboxEnv', () => {
  it('drops what leads to a service outside, and points temporary files and caches into the private /tmp', () => {
    const env = sandboxEnv(
      {
        PATH: '/usr/bin',
        HOME: '/home/ann',
        SSH_AUTH_SOCK: '/run/user/1000/ssh',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
        XDG_RUNTIME_DIR: '/run/user/1000',
        MY_AGENT_SOCK: '/tmp/agent',
        TMPDIR: '/var/tmp/ann',
        UNSET: undefined,
      },
      '/home/ann',
      true,
    );
    expect(env).toMatchObject({
      PATH: '/usr/bin',
      HOME: '/home/ann',
      TMPDIR: '/tmp',
      XDG_CACHE_HOME: '/tmp/.cache',
      npm_config_cache: '/tmp/.npm',
      PIP_CACHE_DIR: '/tmp/.cache/pip',
      GOCACHE: '/tmp/.cache/go-build',
      GRADLE_RO_DEP_CACHE: '/home/ann/.gradle/caches',
    });
    for (const name of ['SSH_AUTH_SOCK', 'DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'MY_AGENT_SOCK', 'UNSET'])
      expect(env).not.toHaveProperty(name);
  });
});

describe('sandboxEnv without network', () => {
  it('has cargo and go work offline from their caches, unless the environment says otherwise', () => {
    expect(sandboxEnv({ PATH: '/usr/bin' }, '/home/ann', false, new Set(), false)).toMatchObject({
      CARGO_NET_OFFLINE: 'true',
      GOPROXY: 'off',
    });
    expect(
      sandboxEnv({ GOPROXY: 'file:///srv/goproxy', CARGO_NET_OFFLINE: 'false' }, '/home/ann', false, new Set(), false),
    ).toMatchObject({ CARGO_NET_OFFLINE: 'false', GOPROXY: 'file:///srv/goproxy' });
    const online = sandboxEnv({ PATH: '/usr/bin' }, '/home/ann', false, new Set(), true);
    expect(online).not.toHaveProperty('CARGO_NET_OFFLINE');
    expect(online).not.toHaveProperty('GOPROXY');
  });
});

describe('nprocLimit', () => {
  it('counts the sandbox alone since Linux 5.14, the user`s other processes too before', () => {
    // The host's processes are counted only for a kernel that counts them against the limit.
    const counted: string[] = [];
    const hostCount = (release: string) => () => {
      counted.push(release);
      return 300;
    };
    expect(nprocLimit(64, '6.18.44-fc', hostCount('6.18'))).toBe(64);
    expect(nprocLimit(64, '5.14.0-1', hostCount('5.14'))).toBe(64);
    expect(nprocLimit(64, '5.10.0-28-amd64', hostCount('5.10'))).toBe(364);
    expect(counted).toEqual(['5.10']);
  });
});

describe('sanitizeGitConfig', () => {
  it('keeps what git needs to read the repository, and drops credentials, helpers, headers and includes', () => {
    const listing = [
      'core.repositoryformatversion\n0',
      'core.bare\nfalse',
      'core.fsmonitor\nsh -c evil',
      'core.hookspath\n/tmp/hooks',
      'extensions.objectformat\nsha256',
      'remote.origin.url\nhttps://ann:ghp_SECRET@github.com/ann/app.git',
      'remote.origin.fetch\n+refs/heads/*:refs/remotes/origin/*',
      'http.https://github.com/.extraheader\nAUTHORIZATION: basic SECRET',
      'credential.helper\nstore',
      'url.https://SECRET@github.com/.insteadof\nhttps://github.com/',
      'include.path\n~/.gitconfig-work',
      'branch.main.remote\norigin',
      'branch.main.merge\nrefs/heads/main',
      'user.email\nann@example.com',
    ].join('\0');
    const text = sanitizeGitConfig(`${listing}\0`);
    expect(text).toBe(
      [
        '[core]',
        '\trepositoryformatversion = "0"',
        '\tbare = "false"',
        '[extensions]',
        '\tobjectformat = "sha256"',
        '[remote "origin"]',
        '\turl = "https://github.com/ann/app.git"',
        '\tfetch = "+refs/heads/*:refs/remotes/origin/*"',
        '[branch "main"]',
        '\tremote = "origin"',
        '\tmerge = "refs/heads/main"',
        '',
      ].join('\n'),
    );
    expect(text).not.toMatch(/SECRET|fsmonitor|hookspath|helper|include/);
  });
});
