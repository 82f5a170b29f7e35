import { readFileSync, realpathSync } from 'node:fs';
import { appendFile, lstat, mkdir, readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { buildIndex } from '../../code/index/build-index.js';
import type { CodeIndex } from '../../code/index/types.js';
import { TASK_LEDGER_FILE } from '../../code/index/artifacts.js';
import { compareApi, snapshotPublicApi, type PublicApiSnapshot } from '../../code/public-api.js';
import { buildContextPack } from '../../context/context-pack.js';
import { admitPatch } from '../../edit/admission.js';
import { applyPatchAtomically } from '../../edit/apply.js';
import { Git } from '../../git/git.js';
import { unsafeUncommitted } from '../../git/unsafe-entries.js';
import { verificationFileMatcher } from '../../verify/verification-files.js';
import type { RunContext } from '../definition.js';
import { runFormatBatch } from './format-batch.js';
import type { ApiChange, RefactorDependencies, RefactorVerifier } from './ports.js';
import type { PreparedRefactor } from './prepare.js';
import { loadRolePrompts } from './role-prompts.js';
import type { RefactorRunSettings } from './run-settings.js';
import { createCommandsRunner, createCommandVerifier } from './verifier.js';

/**
 * The ports of the batch loop over the run's worktree, sandbox and agents (seed 002, 13-17): the
 * patcher and critic runtimes, the context pack of a batch, patch admission, the atomic apply,
 * the formatter of a formatting-only batch, the fast and full verifiers (checked against the
 * baseline), the public API comparison between checkpoints, and the task ledger.
 */
export async function createBatchPorts(
  context: RunContext<RefactorRunSettings>,
  prepared: PreparedRefactor,
): Promise<{ deps: RefactorDependencies; verifier: RefactorVerifier }> {
  const { run, config } = context;
  const settings = config.refactor;
  const commands = context.settings.commands ?? { fast: [], full: [] };
  const worktreeGit = new Git(run.worktree);
  const prompts = await loadRolePrompts();
  // The patcher and the critic share one runtime, with the tools the settings allow.
  const runtime = context.agents.forStage('REFACTOR', {
    allowed: settings.claude.allowedTools,
    offered: settings.claude.tools,
  });
  // The verifiers and the formatter run the patched code: in the same sandbox as the agent.
  const commandOptions = {
    cwd: run.worktree,
    repoRoot: run.repoRoot,
    outputDir: join(context.runDir, 'verify'),
    timeoutMs: config.test.timeoutMs,
    runner: context.commands.runner,
    environment: context.commands.environment,
    redact: context.redact.stored,
  };
  const runCommands = createCommandsRunner(commandOptions);
  const verifier = createCommandVerifier({ ...commandOptions, ...commands, baseline: prepared.baseline }, runCommands);
  const ledgerFile = join(prepared.artifacts, TASK_LEDGER_FILE);
  const isVerifierFile = verificationFileMatcher([...commands.fast, ...commands.full], run.worktree);
  const api = await apiTracker(run.worktree, worktreeGit, prepared.index, {
    cacheDir: join(run.repoRoot, '.ratchet', 'index'),
    excludes: settings.scopeExcludes,
  });
  const deps: RefactorDependencies = {
    workspace: {
      root: run.worktree,
      head: () => worktreeGit.head(),
      async checkpoint(subject, body) {
        // The goal and the rationale come from the user and the model: no key goes into a commit.
        const message = context.redact.commits(body ? `${subject}\n\n${body}` : subject);
        const sha = await worktreeGit.commitAll(message, { allowEmpty: true });
        if (sha === null) throw new RatchetError('git', `Nothing to commit for ${subject}`);
        return sha;
      },
      async resetTo(commit) {
        await worktreeGit.resetHard(commit);
        await worktreeGit.clean();
      },
      applyCheck: (patch) => worktreeGit.applyCheck(patch),
      async apply(patch) {
        return (await applyPatchAtomically(worktreeGit, patch)).files;
      },
      unsafeEntries: () => unsafeUncommitted(worktreeGit),
    },
    verifier,
    agentFor: () => runtime,
    systemPrompt: (role) => (role === 'PATCHER' ? prompts.patcher : prompts.critic),
    async contextFor(batch, feedback) {
      let ledger: string[] = [];
      try {
        ledger = (await readFile(ledgerFile, 'utf8')).split('\n').filter(Boolean);
      } catch {
        ledger = [];
      }
      const worktreeReal = realpathSync(run.worktree);
      const read = (path: string): string | null => {
        try {
          // Only files whose real location is inside the worktree reach the model's context.
          const real = realpathSync(join(run.worktree, path));
          if (!real.startsWith(`${worktreeReal}${sep}`)) return null;
          return readFileSync(real, 'utf8');
        } catch {
          return null;
        }
      };
      return buildContextPack({ batch, index: api.index(), readText: read, ledger, feedback });
    },
    async admit(batch, patch, declared) {
      const admission = await admitPatch({
        patchText: patch,
        declaredFiles: declared,
        scopeGlobs: batch.scope_globs,
        configuredScope: settings.scopeGlobs,
        scopeExcludes: settings.scopeExcludes,
        diffBudgetLoc: batch.diff_budget_loc,
        allowBinary: false,
        allowLockfiles: false,
        isVerifierFile,
        applyCheck: (text) => worktreeGit.applyCheck(text),
        isSymlink: async (path) => (await lstat(join(run.worktree, path)).catch(() => null))?.isSymbolicLink() ?? false,
      });
      return admission.admitted
        ? { admitted: true, patchText: admission.patchText, files: admission.files, loc: admission.loc, violations: [] }
        : {
            admitted: false,
            patchText: patch,
            files: [],
            loc: 0,
            violations: admission.violations.map((violation) => violation.message),
          };
    },
    format: (batch, signal) =>
      runFormatBatch(batch, {
        worktree: run.worktree,
        git: worktreeGit,
        commands: settings.formatter,
        scopeGlobs: settings.scopeGlobs,
        scopeExcludes: settings.scopeExcludes,
        runCommands,
        ...(signal ? { signal } : {}),
      }),
    apiChanges: () => api.changes(),
    acceptApi: () => api.accept(),
    async appendTaskLedger(entry) {
      await mkdir(prepared.artifacts, { recursive: true });
      const line = JSON.stringify({ at: context.clock.now().toISOString(), ...entry });
      await appendFile(ledgerFile, `${context.redact.stored(line)}\n`);
    },
    now: () => context.clock.now(),
  };
  return { deps, verifier };
}

/**
 * The public API of the worktree against the snapshot at the last checkpoint, over an index kept
 * up to date incrementally. Between checkpoints only the files patches touched can differ from
 * what was indexed (the worktree is reset to the checkpoint between attempts): just those are
 * re-checked, without walking the tree; any other move of HEAD (a reset to an older checkpoint)
 * falls back to a full walk.
 */
async function apiTracker(
  worktree: string,
  git: Git,
  start: CodeIndex,
  options: { cacheDir: string; excludes: string[] },
): Promise<{ index(): CodeIndex; changes(): Promise<ApiChange>; accept(): Promise<void> }> {
  let index = start;
  let reference: PublicApiSnapshot = snapshotPublicApi(index);
  let now: PublicApiSnapshot = reference;
  // `start` indexes the worktree at its HEAD now.
  let indexedAt = await git.head();
  const touched = new Set<string>();
  const reindex = async (): Promise<CodeIndex> => {
    const head = await git.head();
    const current = (await git.status()).files.flatMap((file) =>
      file.origPath ? [file.path, file.origPath] : [file.path],
    );
    const changedPaths = head === indexedAt ? [...new Set([...touched, ...current])] : undefined;
    index = await buildIndex({
      root: worktree,
      cacheDir: options.cacheDir,
      excludes: options.excludes,
      git,
      previous: index,
      ...(changedPaths ? { changedPaths } : {}),
    });
    indexedAt = head;
    touched.clear();
    for (const path of current) touched.add(path);
    return index;
  };
  return {
    index: () => index,
    async changes() {
      now = snapshotPublicApi(await reindex());
      return compareApi(reference, now);
    },
    async accept() {
      reference = now;
      // Called right after the checkpoint: the committed tree is the one just indexed.
      indexedAt = await git.head();
      touched.clear();
    },
  };
}
