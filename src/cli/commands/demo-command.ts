import { existsSync } from 'node:fs';
import { cp, mkdtemp, mkdir, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { CliSetup } from './cli-setup.js';
import pc from 'picocolors';
import { loadConfig } from '../../config/load.js';
import { packageRoot } from '../../config/prompts.js';
import { RatchetError } from '../../core/errors.js';
import { NOTES_REF } from '../../core/handoff.js';
import { startRun } from '../../engine/start-run.js';
import { tddWorkflow } from '../../workflows/tdd/definition.js';
import { sandboxUnavailable } from '../../engine/tool-sandbox.js';
import { createProcessRunner } from '../../process/runner.js';
import { checkpointsOf } from '../../engine/checkpoints.js';
import { resolveRun } from '../../engine/run-lookup.js';
import { Git } from '../../git/git.js';
import { createCliOutput, engineServices, openRepoLedger } from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import type { Output } from '../output.js';
import type { Ledger } from '../../ledger/types.js';

const FEATURE = 'A stack with push, pop and peek; popping an empty stack throws';

/**
 * `ratchet demo`: the whole TDD loop on a bundled kata with no API key. The model is a scripted
 * cassette; git, the test runs (`node --test`), the gates and the ledger are all real.
 */
export function registerDemoCommand(program: Command, cli: CliSetup): void {
  const { setExit } = cli;
  program
    .command('demo')
    .description(
      'Run the full TDD loop on a bundled kata with a scripted model (no API key needed): real git, real tests, real ledger',
    )
    .option('--dir <dir>', 'where to create the demo repository (default: a new temporary directory)')
    .action(async (flags: { dir?: string }, command: Command) => {
      const output = createCliOutput(command);
      const root = packageRoot();
      const { repoRoot, home } = await kataRepository(root, flags.dir);
      const git = new Git(repoRoot);
      const cassette = join(root, 'demo', 'cassette.ndjson');
      const flagsOf = (noSandbox: boolean) => ({
        provider: 'replay',
        cassette,
        model: 'scripted-demo-model',
        refactor: 'always',
        ...(noSandbox ? { noSandbox } : {}),
      });
      const env = { ...process.env, RATCHET_HOME: home };
      let config = await loadConfig({ repoRoot, env, flags: flagsOf(false) });
      // The demo's commands are the cassette's, ours: they may run without a sandbox, and it says so.
      const unsandboxed = await sandboxUnavailable(config, createProcessRunner());
      if (unsandboxed !== undefined) config = await loadConfig({ repoRoot, env, flags: flagsOf(true) });
      if (!output.json) printIntro(output, { cassette, unsandboxed, repoRoot });
      await using ledger = await openRepoLedger(repoRoot);
      const interrupt = interruptOnSignals();
      try {
        const { code, outcome } = await driveRun(
          startRun(
            tddWorkflow,
            { directory: repoRoot, request: { feature: FEATURE }, config, allowDirty: false, signal: interrupt.signal },
            engineServices(ledger),
          ),
          output,
          interrupt.bySigint,
        );
        setExit(code);
        if (!output.json) await printAftermath(output, { ledger, git, runId: outcome.runId, repoRoot, root });
      } finally {
        interrupt.dispose();
      }
    });
}

/** A fresh copy of the kata with `main` and an initial commit, under `dir` or a new temporary directory. */
async function kataRepository(root: string, dir: string | undefined): Promise<{ repoRoot: string; home: string }> {
  const base = dir ? resolve(dir) : await mkdtemp(join(tmpdir(), 'ratchet-demo-'));
  const repoRoot = join(base, 'stack-kata');
  const home = join(base, 'ratchet-home');
  // Nothing is written into a directory that holds anything: the demo's files would mix with it.
  if (dir) await requireEmptyDirectory(base, repoRoot);
  await mkdir(base, { recursive: true });
  await cp(join(root, 'demo', 'kata'), repoRoot, { recursive: true, errorOnExist: true, force: false });
  await Git.init(repoRoot, { initialBranch: 'main' });
  await new Git(repoRoot).commitAll('Initial commit: stack kata', { allowEmpty: false });
  return { repoRoot, home };
}

/** `--dir` must be missing (it is created) or an empty directory; an earlier demo there is pointed at. */
async function requireEmptyDirectory(dir: string, repoRoot: string): Promise<void> {
  const found = await stat(dir).catch(() => null);
  if (found === null) return;
  const hint =
    'Pass --dir with a new or empty directory (a missing one is created), or leave --dir out for a temporary one.';
  if (!found.isDirectory()) throw new RatchetError('usage', `--dir ${dir} is a file, not a directory.`, { hint });
  const entries = await readdir(dir);
  if (entries.length === 0) return;
  if (existsSync(repoRoot)) {
    throw new RatchetError('usage', `${repoRoot} already exists: a demo starts from a fresh copy of the kata.`, {
      hint: `Pass --dir with a new or empty directory, or look at the earlier demo there (cd ${repoRoot} && ratchet status).`,
    });
  }
  throw new RatchetError(
    'usage',
    `--dir ${dir} is not empty (${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}): the demo writes its repository and its RATCHET_HOME into a new or empty directory.`,
    { hint },
  );
}

/** What the demo says before the run: the model is scripted, everything else is real. */
function printIntro(
  output: Output,
  { cassette, unsandboxed, repoRoot }: { cassette: string; unsandboxed: string | undefined; repoRoot: string },
): void {
  output.out(pc.bold(pc.magenta('Ratchet demo: the model is SCRIPTED.')));
  output.out(pc.magenta(`Its answers are replayed from ${cassette}; no model API is called and no key is needed.`));
  output.out(
    pc.dim(
      'Everything else is real: git worktree and commits, handoff notes, `node --test` at every gate, the SQLite ledger.',
    ),
  );
  if (unsandboxed !== undefined)
    output.out(
      pc.yellow(
        `No sandbox can be made here (${unsandboxed}). The demo's commands are its own script's, so it runs them as with --no-sandbox; a run with a real model would refuse (see ratchet doctor).`,
      ),
    );
  output.out(pc.dim(`Repository: ${repoRoot}\n`));
}

/** What the run left behind (commits, notes, the ledger) and the commands to look around. */
async function printAftermath(
  output: Output,
  { ledger, git, runId, repoRoot, root }: { ledger: Ledger; git: Git; runId: string; repoRoot: string; root: string },
): Promise<void> {
  const run = await resolveRun(ledger, runId);
  const checkpoints = await checkpointsOf(git, run);
  const summary = await ledger.summary(run.id);
  output.out(pc.bold('\nWhat the run left behind'));
  output.out(`  ${checkpoints.length} commits on ${run.branch}, each with a handoff note under ${NOTES_REF}:`);
  for (const checkpoint of checkpoints)
    output.out(`    ${pc.yellow(checkpoint.sha.slice(0, 8))} ${checkpoint.subject}`);
  output.out(
    `  ledger ${join(repoRoot, '.ratchet', 'ledger.db')}: ${summary.stageAttempts.total} stage attempts (${summary.stageAttempts.rejected} rejected by a gate), ` +
      `${summary.modelCalls.total} scripted model calls, ${summary.toolCalls.total} tool calls, ${summary.verifications.total} real test and check runs`,
  );
  output.out(pc.magenta('  The model was scripted (replay cassette); the gates, tests and commits were real.'));
  const ratchet = `node ${join(root, 'dist', 'bundle', 'bin.js')}`;
  output.out(pc.bold('\nLook around'));
  output.out(`  cd ${repoRoot}`);
  output.out(`  ${ratchet} status      # phase, progress, tokens`);
  output.out(`  ${ratchet} history     # every checkpoint and its handoff note`);
  output.out(`  ${ratchet} report      # Markdown + HTML report`);
  output.out(`  git log --oneline --notes=${NOTES_REF.replace('refs/notes/', '')} ${run.branch}`);
  output.out(`  ${ratchet} accept      # merge into main (or: reject)`);
}
