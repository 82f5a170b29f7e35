/**
 * Dependency folders shared into a run's worktree by symlink stay out of the run's commits. The
 * usual `.gitignore` entry `node_modules/` matches a directory, not a symlink: without the
 * exclude Ratchet adds, the link was committed and `accept` replaced the user's real
 * `node_modules` with a link to itself.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { RatchetEvent } from '../../src/core/events.js';
import { createEngineServices } from '../../src/engine/effects.js';
import { checkpointsOf } from '../../src/engine/checkpoints.js';
import { resolveRun } from '../../src/engine/run-lookup.js';
import { acceptRun, startTdd, type RunOutcome } from '../../src/library.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { PACKAGE_ROOT } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let repo: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  repo = await createTempRepo({ files: { '.gitignore': 'node_modules/\n' } });
  await cp(join(PACKAGE_ROOT, 'demo', 'kata'), repo.dir, { recursive: true });
  await repo.git.commitAll('stack kata');
  await mkdir(join(repo.dir, 'node_modules', 'left-pad'), { recursive: true });
  await writeFile(join(repo.dir, 'node_modules', 'left-pad', 'index.js'), 'export default 1;\n');
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

async function drain(run: AsyncGenerator<RatchetEvent, RunOutcome>): Promise<RunOutcome> {
  for (;;) {
    const next = await run.next();
    if (next.done) return next.value;
  }
}

/** The subject is what the commits hold, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();

describe(`shared dependency folders${sandbox.note}`, () => {
  it('are linked into the worktree but never committed, and accept leaves the real folder alone', async () => {
    const config = await loadConfig({
      repoRoot: repo.dir,
      env: { ...repo.env, RATCHET_HOME: repo.path('home') },
      flags: {
        provider: 'replay',
        cassette: join(PACKAGE_ROOT, 'demo', 'cassette.ndjson'),
        model: 'scripted-demo-model',
        refactor: 'always',
        ...sandbox.configFlags,
      },
    });
    const services = createEngineServices(ledger, repo.env);
    const feature = 'A stack with push, pop and peek; popping an empty stack throws';
    const outcome = await drain(startTdd({ repoRoot: repo.dir, feature, config, allowDirty: false }, services));
    expect(outcome.status).toBe('completed');

    const run = await resolveRun(ledger, outcome.runId);
    expect(lstatSync(join(run.worktree, 'node_modules')).isSymbolicLink()).toBe(true);
    const checkpoints = await checkpointsOf(repo.git, run);
    expect(checkpoints.length).toBeGreaterThan(3);
    const committed = repo.run('diff', '--name-only', `${run.baseCommit}..${run.branch}`).split('\n');
    expect(committed).not.toContain('node_modules');
    expect(committed.some((path) => path.startsWith('node_modules'))).toBe(false);
    expect(readFileSync(join(repo.dir, '.git', 'info', 'exclude'), 'utf8')).toMatch(/^\/node_modules$/m);

    await acceptRun(repo.dir, await resolveRun(ledger, outcome.runId), ledger, { force: false });
    const real = lstatSync(join(repo.dir, 'node_modules'));
    expect(real.isSymbolicLink()).toBe(false);
    expect(real.isDirectory()).toBe(true);
    expect(readFileSync(join(repo.dir, 'node_modules', 'left-pad', 'index.js'), 'utf8')).toBe('export default 1;\n');
    expect(repo.run('status', '--porcelain')).toBe('');
  });
});
