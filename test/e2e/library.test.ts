/**
 * Ratchet as a library: a consumer project imports the BUILT package by its name (`ratchet`,
 * through package.json `exports`), type-checks against the emitted declarations, and runs the
 * whole TDD loop on the demo kata with the demo's cassette: real git, real `node --test`, real
 * ledger, then accepts the run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PACKAGE_ROOT, cliEnv } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const CONSUMER = `
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import {
  Git, NOTES_REF, acceptRun, checkpointsOf, createEngineServices, ledgerPath, loadConfig, openLedger, resolveRun, startTdd,
  type RatchetEvent, type RunOutcome,
} from 'ratchet';

const [packageRoot, repoRoot, home, ...options] = process.argv.slice(2) as [string, string, string, ...string[]];
await cp(join(packageRoot, 'demo', 'kata'), repoRoot, { recursive: true });
await Git.init(repoRoot, { initialBranch: 'main' });
const git = new Git(repoRoot);
await git.commitAll('Initial commit: stack kata', { allowEmpty: false });

const config = await loadConfig({
  repoRoot,
  env: { ...process.env, RATCHET_HOME: home },
  flags: { provider: 'replay', cassette: join(packageRoot, 'demo', 'cassette.ndjson'), model: 'scripted-demo-model', refactor: 'always', ...(options.includes('--no-sandbox') ? { noSandbox: true } : {}) },
});
await using ledger = await openLedger(ledgerPath(repoRoot));
const run = startTdd(
  { repoRoot, feature: 'A stack with push, pop and peek; popping an empty stack throws', config, allowDirty: false },
  createEngineServices(ledger),
);
const types = new Set<string>();
let outcome: RunOutcome | undefined;
while (outcome === undefined) {
  const next: IteratorResult<RatchetEvent, RunOutcome> = await run.next();
  if (next.done) outcome = next.value;
  else types.add(next.value.type);
}
const gitRun = await resolveRun(ledger, outcome.runId);
const checkpoints = await checkpointsOf(git, gitRun);
const accepted = outcome.status === 'completed' ? await acceptRun(repoRoot, await resolveRun(ledger, outcome.runId), ledger, { force: false }) : null;
process.stdout.write(JSON.stringify({
  status: outcome.status,
  eventTypes: [...types],
  subjects: checkpoints.map((checkpoint) => checkpoint.subject),
  notesRef: NOTES_REF,
  acceptMode: accepted?.mode ?? null,
}) + '\\n');
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'ESNext.Disposable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    // As most projects do (web-tree-sitter's own declarations need Emscripten's global types).
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(PACKAGE_ROOT, 'node_modules', '@types')],
  },
  include: ['consumer.ts'],
};

const ResultSchema = z.object({
  status: z.string(),
  eventTypes: z.array(z.string()),
  subjects: z.array(z.string()),
  notesRef: z.string(),
  acceptMode: z.enum(['fast-forward', 'merge']).nullable(),
});

/** The subject is the library API, not the sandbox: where bubblewrap is missing its run opts out (noSandbox). */
const sandbox = sandboxForThisMachine();

describe(`the library entry point (import from "ratchet")${sandbox.note}`, () => {
  let root: string;
  let consumer: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ratchet-library-'));
    consumer = join(root, 'consumer');
    await mkdir(join(consumer, 'node_modules'), { recursive: true });
    await symlink(PACKAGE_ROOT, join(consumer, 'node_modules', 'ratchet'), 'dir');
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await writeFile(join(consumer, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await writeFile(join(consumer, 'consumer.ts'), CONSUMER);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('type-checks a consumer against the emitted declarations', () => {
    const tsc = join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', consumer], { cwd: consumer, encoding: 'utf8' });
    // tsc's diagnostics in the failure message when the declarations or the exports map are broken.
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('runs the TDD loop on the demo kata through the package and accepts it', () => {
    const repo = join(root, 'kata');
    const home = join(root, 'home');
    const stdout = execFileSync(
      process.execPath,
      [join(consumer, 'consumer.ts'), PACKAGE_ROOT, repo, home, ...sandbox.flags],
      {
        cwd: consumer,
        env: cliEnv({}),
        encoding: 'utf8',
        timeout: 180_000,
      },
    );
    const result = ResultSchema.parse(JSON.parse(stdout.trim().split('\n').at(-1) ?? ''));
    expect(result.status).toBe('completed');
    expect(result.eventTypes).toEqual(
      expect.arrayContaining(['run-start', 'stage-start', 'verify-end', 'checkpoint-create', 'note-write', 'run-end']),
    );
    expect(result.subjects[0]).toMatch(/^plan:/);
    expect(result.subjects.some((subject) => subject.startsWith('test:'))).toBe(true);
    expect(result.subjects.some((subject) => /^(feat|fix):/.test(subject))).toBe(true);
    expect(result.notesRef).toBe('refs/notes/tdd-handoffs');
    expect(result.acceptMode).toBe('fast-forward');
    // Accepted: the kata's main branch now has the run's commits and the tests pass there.
    const log = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    expect(log.length).toBe(result.subjects.length + 1);
    execFileSync(process.execPath, ['--test'], { cwd: repo, encoding: 'utf8' });
  });
});
