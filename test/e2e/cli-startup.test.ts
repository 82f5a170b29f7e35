/**
 * End to end: what the built CLI imports to start. `ratchet --version` and `ratchet --help` read
 * the command table only; a command imports its own file, not every other command's (nor, through
 * them, the AI SDK, the queue, the code index...). Checked on the modules the process loads, not
 * on timings: the CLI is a bundle (`dist/bundle/`, scripts/bundle-cli.ts), so each file it loads
 * (a chunk) stands for the source modules the bundler put in it (`dist/bundle/meta.json`).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openLedger } from '../../src/ledger/ledger.js';
import { assertFreshBuild, CLI, cliEnv, PACKAGE_ROOT } from '../support/run-cli.js';

/** Preloaded into the CLI: writes every module URL the process loads to `$RATCHET_TEST_LOADS`. */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.RATCHET_TEST_LOADS, loaded.join('\\n')));
`)}`;

let scratch = '';
beforeAll(() => assertFreshBuild());
afterEach(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = '';
});

/** The bundle's metafile: which source modules (paths from the package root) each output holds. */
const MetafileSchema = z.object({
  outputs: z.record(z.string(), z.object({ inputs: z.record(z.string(), z.unknown()) })),
});

/** What a loaded file holds: a bundle output's inputs, or the file itself (a package left outside). */
async function sourcesOf(paths: readonly string[]): Promise<string[]> {
  const meta = MetafileSchema.parse(
    JSON.parse(await readFile(join(PACKAGE_ROOT, 'dist', 'bundle', 'meta.json'), 'utf8')),
  );
  return paths.flatMap((path) => {
    if (!path.startsWith('dist/bundle/')) return [path];
    const output = meta.outputs[path];
    if (output === undefined) throw new Error(`${path} is not in dist/bundle/meta.json: run \`npm run build\``);
    return Object.keys(output.inputs);
  });
}

/**
 * The modules `ratchet <args>` loads in a fresh repository (with a recorded run of `withRun`'s
 * workflow): the package's own as `src/...`, dependencies by package name.
 */
async function modulesLoadedBy(
  args: readonly string[],
  withRun?: string,
): Promise<{ files: string[]; packages: Set<string> }> {
  scratch = await mkdtemp(join(tmpdir(), 'ratchet-startup-'));
  const repo = join(scratch, 'repo');
  execFileSync('git', ['init', '-q', repo]);
  if (withRun !== undefined) {
    execFileSync('git', [
      '-C',
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@t',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'start',
    ]);
    const baseCommit = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    await mkdir(join(repo, '.ratchet'));
    const ledger = await openLedger(join(repo, '.ratchet', 'ledger.db'), { secrets: [] });
    try {
      await ledger.createRun({
        id: `${withRun}-1`,
        workflow: withRun,
        repoRoot: repo,
        feature: 'a feature',
        branch: `ratchet/${withRun}-1`,
        baseBranch: 'main',
        baseCommit,
        worktree: join(scratch, 'worktree'),
      });
    } finally {
      await ledger.close();
    }
  }
  const record = join(scratch, 'loads.txt');
  try {
    execFileSync(process.execPath, ['--import', RECORD_LOADS, CLI, ...args], {
      cwd: repo,
      env: cliEnv({ RATCHET_HOME: join(scratch, 'home'), RATCHET_TEST_LOADS: record }),
      stdio: 'ignore',
    });
  } catch {
    // The exit code is not this test's subject; the modules are.
  }
  const urls = (await readFile(record, 'utf8')).split('\n').filter((url) => url.startsWith('file:'));
  const paths = await sourcesOf(urls.map((url) => relative(PACKAGE_ROOT, fileURLToPath(url))));
  return {
    files: paths.filter((path) => path.startsWith('src/')),
    packages: new Set(
      paths.flatMap((path) => {
        const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
        return match?.[1] !== undefined ? [match[1]] : [];
      }),
    ),
  };
}

describe('ratchet start-up', () => {
  it('--version and --help load the command table, no command file and no dependency but commander and picocolors', async () => {
    for (const args of [['--version'], ['--help']]) {
      const { files, packages } = await modulesLoadedBy(args);
      expect(files, args.join(' ')).toContain('src/cli/commands/index.ts');
      expect(
        files.filter((file) => /^src\/(engine|workflows|ledger|llm|agent|code|config|verify|report)\//.test(file)),
        args.join(' '),
      ).toEqual([]);
      expect(
        files.filter((file) => file.startsWith('src/cli/commands/') && !/\/(index|register-commands)\.ts$/.test(file)),
        args.join(' '),
      ).toEqual([]);
      expect([...packages].sort(), args.join(' ')).toEqual(['commander', 'picocolors']);
    }
  });

  it('a command loads its own file and not the others, and only the workflow of the run it shows', async () => {
    const { files, packages } = await modulesLoadedBy(['status', '--json'], 'tdd');
    expect(files).toContain('src/cli/commands/status-command.ts');
    expect(files).toContain('src/workflows/tdd/definition.ts');
    for (const other of ['refactor', 'solve', 'tasks', 'exercise']) {
      expect(files).not.toContain(`src/workflows/${other}/definition.ts`);
    }
    for (const other of ['tdd-command', 'tasks-commands', 'worker-command', 'refactor-commands', 'team-commands']) {
      expect(files).not.toContain(`src/cli/commands/${other}.ts`);
    }
    expect(packages).not.toContain('bullmq');
    expect(packages).not.toContain('ink');
  });

  it('a workflow command loads no provider SDK before its model is called (then only its own)', async () => {
    const { files, packages } = await modulesLoadedBy(['tasks', 'run', '--help']);
    expect(files).toContain('src/llm/providers.ts');
    for (const sdk of ['@ai-sdk/anthropic', '@ai-sdk/openai', '@ai-sdk/openai-compatible']) {
      expect(packages).not.toContain(sdk);
    }
  });
});
