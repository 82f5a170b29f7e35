import { readFileSync, realpathSync } from 'node:fs';
import { appendFile, lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { commandEnvironment } from '../../process/env.js';
import type { AgentRuntime } from '../../core/agent.js';
import type { EventInput, RatchetEvent } from '../../core/events.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { stageModelOverrideNotice, type ResolvedConfig } from '../../config/resolved.js';
import { fileRole } from '../../code/file-role.js';
import { checkNeedsRefactor } from '../../code/size-check.js';
import { buildIndex } from '../../code/index/build-index.js';
import type { CodeIndex } from '../../code/index/types.js';
import { TASK_LEDGER_FILE, writeIndexArtifacts } from '../../code/index/artifacts.js';
import { compareApi, snapshotPublicApi, type PublicApiSnapshot } from '../../code/public-api.js';
import { admitPatch } from '../../edit/admission.js';
import { applyPatchAtomically } from '../../edit/apply.js';
import { Git } from '../../git/git.js';
import { acquireRepoLock } from '../../git/repo-lock.js';
import { unsafeUncommitted } from '../../git/unsafe-entries.js';
import { buildContextPack } from '../../context/context-pack.js';
import { detectTestCommand } from '../../verify/detect.js';
import { verificationFileMatcher } from '../../verify/verification-files.js';
import { editableInstallPaths } from '../../verify/editable-installs.js';
import { PYTHON_ENVIRONMENTS, withEditableInstalls } from '../editable-install-env.js';
import { markRolledBack, runBatchLoop, type RefactorLoopResult } from '../../workflows/refactor/batch-loop.js';
import { boundPlannerBatches, heuristicPlan, type FileFacts, type PlanBounds } from '../../workflows/refactor/plan.js';
import type { RefactorDependencies, RefactorVerifier, VerifierRun } from '../../workflows/refactor/ports.js';
import { PlannerResponseSchema, type PlannedBatch } from '../../workflows/refactor/schemas.js';
import { createProviderRuntime, promptDirectory } from '../agent-runtimes.js';
import { createModelPool, runModel, type ModelPool } from '../model-factory.js';
import { createEnveloper } from '../event-stream.js';
import { pipeEvents } from '../../core/event-pipe.js';
import { asGitRun, type GitRun } from '../git-run.js';
import { artifactsDir, runBranch, runDir, worktreePath } from '../run-paths.js';
import type { EngineServices } from '../tdd-run.js';
import { backupDirectory, createBackup, type Backup } from './backup.js';
import { loadRefactorSettings, type RefactorSettings } from './refactor-config.js';
import { copyPath, gitCopyOf } from './safe-copy.js';
import { runFormatBatch } from './format-batch.js';
import { createCommandVerifier, createCommandsRunner } from './verifier.js';
import {
  addRunWorktree,
  discardRunWorktree,
  RATCHET_EXCLUDES,
  requireCommit,
  requireWritableHome,
  shareDependencies,
} from '../worktree-setup.js';
import { requireSandbox, toolSandbox, type ToolSandbox } from '../tool-sandbox.js';
import { loadRolePrompts } from './role-prompts.js';
import { deadFunctions } from './dead-code.js';

/** Where a refactor run lives: the target's repository, or a git copy of a non-repository. */
export interface RefactorHome {
  runId: string;
  target: string;
  repoRoot: string;
  isGit: boolean;
}

/**
 * Seed 002, 8.1: a git target is worked on through a branch and worktree; any other directory
 * is first copied into a fresh git repository under `$RATCHET_HOME/copies/<run-id>/`, so the
 * original is never touched. Open the ledger at `repoRoot` afterwards.
 */
export async function refactorHome(
  target: string,
  config: ResolvedConfig,
  services: Pick<EngineServices, 'ids'>,
): Promise<RefactorHome> {
  const runId = services.ids.runId();
  if (await Git.isRepository(target)) {
    // A directory inside a repository stands for the repository (seed 002: `run <repo>`): the
    // baseline, the index and the backup are of all of it.
    const root = await new Git(target).root();
    return { runId, target: root, repoRoot: root, isGit: true };
  }
  const repoRoot = copyPath(config.home, runId, target);
  await requireWritableHome(config.home);
  await gitCopyOf(target, repoRoot);
  return { runId, target, repoRoot, isGit: false };
}

/**
 * After `prepareRefactor` failed: a plain directory's working copy that never got a run (a
 * check failed first) is left for nobody, so it goes. Call it with the ledger closed; `recorded`
 * says whether the run made it into the copy's ledger.
 */
export async function discardUnusedCopy(home: RefactorHome, recorded: boolean): Promise<void> {
  if (!home.isGit && !recorded) await rm(dirname(home.repoRoot), { recursive: true, force: true });
}

export interface RefactorOptions {
  home: RefactorHome;
  /** The directory to refactor (a git repository or not). */
  target: string;
  goal: string | null;
  config: ResolvedConfig;
  allowDirty: boolean;
  useCritic: boolean;
  /** Append every model call to this cassette (`--record FILE`). */
  recordPath?: string;
  signal?: AbortSignal;
}

export interface PreparedRefactor {
  run: GitRun;
  /** The git repository the run lives in: the target, or a copy of it when it is not a repository. */
  repoRoot: string;
  target: string;
  settings: RefactorSettings;
  baseline: VerifierRun;
  backup: Backup;
  index: CodeIndex;
  artifacts: string;
  plan: PlannedBatch[];
  planSource: 'heuristic' | 'planner';
  verifierCommands: { fast: string[]; full: string[] };
  /** The runner of the agent's shell and of the verifiers (sandboxed when it can be), set up once. */
  sandbox: ToolSandbox;
  /** The run's model clients, shared by the planner, the patcher and the critic (one cassette stream). */
  models: ModelPool;
}

export interface RefactorOutcome {
  runId: string;
  status: 'completed' | 'failed' | 'interrupted';
  loop: RefactorLoopResult | null;
  finalVerifier: VerifierRun | null;
  error: RatchetError | null;
}

/** Wraps an event in the run's envelope and stores it (progress-only `model-delta` is not stored). */
function recorder(
  envelope: (event: EventInput) => RatchetEvent,
  ledger: EngineServices['ledger'],
): (event: EventInput) => Promise<RatchetEvent> {
  return async (event) => {
    const wrapped = envelope(event);
    if (wrapped.type !== 'model-delta') await ledger.record(wrapped);
    return wrapped;
  };
}

/** The verifier commands: the configured ones, else the detected test command (+ lint, typecheck for full). */
export async function verifierCommands(
  root: string,
  settings: RefactorSettings,
  config: ResolvedConfig,
): Promise<{ fast: string[]; full: string[] }> {
  let fast = settings.fastVerifier;
  let full = settings.fullVerifier;
  if (fast.length === 0 || full.length === 0) {
    const detected = await detectTestCommand(root, config.test.command).catch((error: unknown) => {
      const failure = toRatchetError(error);
      if (failure.code !== 'config') throw failure;
      throw new RatchetError(
        'config',
        `No verifier commands for ${root}: ${[fast.length === 0 ? 'fast_verifier' : null, full.length === 0 ? 'full_verifier' : null].filter(Boolean).join(' and ')} not set, and no test command was found to use instead.`,
        {
          hint: 'Set fast_verifier and full_verifier ([refactor] in .ratchet/config.toml, or .refactor-bot.config.json), or [test] command.',
          cause: error,
        },
      );
    });
    if (fast.length === 0) fast = [detected.command];
    if (full.length === 0)
      full = [
        detected.command,
        ...[config.lint.command, config.typecheck.command].filter((command): command is string => Boolean(command)),
      ];
  }
  return { fast, full };
}

/**
 * The bounds of a run's plan (seed 002, 11 and 15.1), for `refactor run` and `refactor plan`
 * alike: a configured formatter starts it with the formatting-only batch, and no batch is planned
 * on a file that defines verification (admission refuses every patch to it).
 */
export function planBounds(
  settings: RefactorSettings,
  index: CodeIndex,
  commands: { fast: string[]; full: string[] },
  root: string,
): PlanBounds {
  return {
    maxBatches: settings.maxBatches,
    diffBudgetLoc: settings.diffBudgetLoc,
    scopeGlobs: settings.scopeGlobs,
    scopeExcludes: settings.scopeExcludes,
    files: index.files.map((file) => file.path),
    formatting: settings.formatter.length > 0,
    isProtected: verificationFileMatcher([...commands.fast, ...commands.full], root),
  };
}

/** Facts the heuristic planner needs, per indexed source file. */
export async function fileFacts(index: CodeIndex, root: string, config: ResolvedConfig): Promise<FileFacts[]> {
  const risk = new Map(index.risk.map((entry) => [entry.path, entry]));
  const dead = await deadFunctions(index, root);
  const facts: FileFacts[] = [];
  for (const file of index.files) {
    if (file.language === null) continue;
    const entry = risk.get(file.path);
    const check = await checkNeedsRefactor([file.path], root, config.refactorCheck);
    facts.push({
      path: file.path,
      language: file.language,
      lines: file.lines,
      fanIn: entry?.fanIn ?? 0,
      churn: entry?.churn ?? 0,
      hasTest: (entry?.tests.length ?? 0) > 0,
      risk: entry?.score ?? 0,
      sizeReasons: check.reasons,
      unusedPrivateSymbols: dead.get(file.path) ?? [],
      role: await fileRole(file, root),
    });
  }
  return facts;
}

/**
 * The agent runtime of a refactor role (planner, patcher, critic) on the configured provider;
 * with `sandbox`, the agent's Bash (or the Claude Code CLI, tools and all) runs in it. Every
 * role of a run gets its model clients from the run's one `models` pool: a replay cassette is
 * one ordered stream for the planner, the patcher and the critic (and `--record` writes one).
 */
function roleRuntime(
  config: ResolvedConfig,
  services: EngineServices,
  settings: RefactorSettings,
  runDirectory: string,
  models: ModelPool,
  claudeAllowedTools: string,
  claudeTools = claudeAllowedTools,
  sandbox?: ToolSandbox,
): AgentRuntime {
  return createProviderRuntime({
    config,
    env: services.env,
    runner: services.runner,
    ...(sandbox ? { toolRunner: sandbox.runner, claudeRunner: sandbox.claudeRunner } : {}),
    environment: commandEnvironment(services.env, config.bash.env),
    models,
    clock: services.clock,
    ids: services.ids,
    promptDir: promptDirectory(runDirectory),
    claudeAllowedTools,
    claudeTools,
    claudeBinary: settings.claude.binary,
    timeoutMs: config.tdd.stageTimeoutMs,
    ...(services.fetch ? { fetch: services.fetch } : {}),
  });
}

/**
 * `ratchet refactor run` up to the confirm screen (seed 002, 18): safety branch and worktree (a
 * git copy for non-repositories), backup, baseline (refuses when red), index and artifacts,
 * heuristic plan refined by the planner within bounds. Nothing in the user's tree changes.
 */
export async function* prepareRefactor(
  options: RefactorOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, PreparedRefactor> {
  const { config } = options;
  const { target, runId, repoRoot, isGit } = options.home;
  const git = new Git(repoRoot);
  await requireCommit(git, repoRoot);
  await git.addInfoExclude(RATCHET_EXCLUDES);
  const status = await git.status();
  if (!status.clean && !options.allowDirty) {
    throw new RatchetError('dirty-tree', `The working tree has uncommitted changes (${status.files.length} files).`, {
      hint: 'Commit or stash them, or pass --allow-dirty to start from HEAD.',
    });
  }
  const settings = await loadRefactorSettings(target, config);
  const models = createModelPool({
    config,
    env: services.env,
    ...(options.recordPath ? { recordPath: options.recordPath } : {}),
    ...(services.fetch ? { fetch: services.fetch } : {}),
  });
  // Made first: a missing key or a bad endpoint fails before any backup, branch, worktree or run exists.
  roleRuntime(config, services, settings, runDir(repoRoot, runId), models, 'Read,Grep,Glob');
  // Model-written commands run only in a sandbox, unless the user opted out.
  await requireSandbox(config, services.runner);
  // So is a project with nothing to verify it, or a $RATCHET_HOME that cannot hold the backup
  // and the worktree: before any backup or worktree.
  await verifierCommands(target, settings, config);
  await requireWritableHome(config.home);
  const lock = await acquireRepoLock(await git.commonDir(), { runId });
  try {
    const baseCommit = await git.head();
    const branch = runBranch(runId);
    const worktree = worktreePath(config.home, runId);
    const backup = await createBackup(target, backupDirectory(config.home, target, runId), services.runner, {
      git: isGit,
    });
    await addRunWorktree(git, worktree, branch, baseCommit);
    let created = false;
    let sandbox: ToolSandbox | undefined;
    try {
      await shareDependencies(target, worktree, git);
      const commands = await verifierCommands(worktree, settings, config);
      const run = asGitRun(
        await services.ledger.createRun({
          id: runId,
          workflow: 'refactor',
          repoRoot,
          feature: options.goal ?? 'whole-repository refactor',
          branch,
          baseBranch: await git.currentBranch(),
          baseCommit,
          worktree,
          provider: config.provider.name,
          // Claude Code picks its own default model unless one was configured (then --model).
          model: config.provider.name === 'claude-code' && !config.origins['provider.model'] ? null : runModel(config),
          config: { target, isGit, settings, commands, backup },
        }),
      );
      created = true;
      const emit = createEnveloper(runId, services.clock);
      const record = recorder(emit, services.ledger);
      yield await record({
        type: 'run-start',
        workflow: 'refactor',
        feature: run.feature,
        branch,
        worktree,
        baseCommit,
        resumed: false,
      });
      yield await record({
        type: 'backup-create',
        bundle: backup.bundle,
        snapshot: backup.snapshot,
        directory: backup.directory,
      });
      sandbox = withEditableInstalls(
        await toolSandbox(config, services.runner, {
          protect: [repoRoot, target],
          worktree,
          dependenciesOf: target,
          runId,
        }),
        await editableInstallPaths(target, worktree, PYTHON_ENVIRONMENTS),
      );
      yield await record({ type: 'sandbox-start', ...sandbox.start });
      // `--model` won over `[stages.refactor] model`: said, never silent.
      const overridden = stageModelOverrideNotice(config, ['refactor']);
      if (overridden !== null) yield await record({ type: 'warning', message: overridden });
      const outputs = join(runDir(repoRoot, runId), 'verify');
      // Logs and artifacts quote the project's output and text: none of them holds a key.
      const redact = createRedactor(secretsFromEnv(services.env));
      const verifier = createCommandVerifier({
        cwd: worktree,
        repoRoot,
        outputDir: outputs,
        fast: commands.fast,
        full: commands.full,
        timeoutMs: config.test.timeoutMs,
        runner: sandbox.runner,
        environment: commandEnvironment(services.env, config.bash.env),
        redact,
      });
      yield await record({ type: 'stage-start', stage: 'BASELINE', phase: 'SETUP', cycle: 0, attempt: 1 });
      const baseline = await verifier.run('baseline', 'BASELINE', options.signal);
      for (const entry of baseline.results)
        yield await record({
          type: 'verify-end',
          stage: 'BASELINE',
          kind: 'baseline',
          result: entry.result,
          outputFile: entry.outputFile,
        });
      yield await record({
        type: 'stage-end',
        stage: 'BASELINE',
        phase: 'SETUP',
        cycle: 0,
        attempt: 1,
        outcome: baseline.ok ? 'accepted' : 'rejected',
      });
      if (!baseline.ok) {
        const failed = baseline.results.find((entry) => !entry.result.ok);
        const where = failed
          ? ` \`${failed.result.command}\` exited ${String(failed.result.exitCode)}${failed.outputFile ? `; its output is in ${join(repoRoot, failed.outputFile)}` : ''}.`
          : '';
        throw new RatchetError(
          'gate-failed',
          `The baseline verification fails: refusing to refactor a red repository.${where}`,
          { hint: 'Make `ratchet refactor verify` pass first.', details: { runId } },
        );
      }
      const artifacts = artifactsDir(repoRoot, runId);
      const index = await buildIndex({
        root: worktree,
        cacheDir: join(repoRoot, '.ratchet', 'index'),
        excludes: settings.scopeExcludes,
        git: new Git(worktree),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      await writeIndexArtifacts(index, artifacts, { redact });
      yield await record({
        type: 'index-build',
        files: index.files.length,
        parsed: index.stats.parsed,
        reused: index.stats.reused,
        symbols: index.files.reduce((sum, file) => sum + file.symbols.length, 0),
        durationMs: index.stats.durationMs,
        artifacts,
      });
      const bounds = planBounds(settings, index, commands, worktree);
      const heuristic = heuristicPlan(await fileFacts(index, worktree, config), { goal: options.goal, bounds });
      let plan = heuristic;
      let planSource: 'heuristic' | 'planner' = 'heuristic';
      if (heuristic.length > 0) {
        const prompts = await loadRolePrompts();
        yield await record({ type: 'stage-start', stage: 'PLANNER', phase: 'SETUP', cycle: 0, attempt: 1 });
        const prompt = [
          options.goal
            ? `Goal of this run: ${options.goal}`
            : 'Goal of this run: improve the code base safely, in small batches.',
          `At most ${settings.maxBatches} batches; diff budget per batch at most ${settings.diffBudgetLoc} lines.`,
          `Every batch's scope_globs must stay within: ${settings.scopeGlobs.join(', ')}.`,
          `Excluded from every scope: ${settings.scopeExcludes.join(', ') || 'nothing'}.`,
          '',
          'Heuristic plan (from the index):',
          JSON.stringify({ batches: heuristic }, null, 2),
          '',
          'Riskiest files (risk register):',
          ...index.risk
            .slice(0, 15)
            .map(
              (entry) =>
                `- ${entry.path}: score ${entry.score}, fan-in ${entry.fanIn}, churn ${entry.churn}, ${entry.lines} lines, tests: ${entry.tests.length}`,
            ),
        ].join('\n');
        try {
          // Its events (retries included) stream as they come, and are recorded even when it fails.
          const stream = pipeEvents((emitInput) =>
            roleRuntime(
              config,
              services,
              settings,
              runDir(repoRoot, runId),
              models,
              'Read,Grep,Glob',
              'Read,Grep,Glob',
              sandbox,
            ).runStage({
              stage: 'PLANNER',
              worktree,
              systemPrompt: prompts.planner,
              prompt,
              paths: { read: ['**'], write: [], denyWrite: ['**'] },
              maxTurns: settings.claude.maxTurnsPlanner,
              bashTimeoutMs: config.bash.timeoutMs,
              outputSchema: PlannerResponseSchema,
              ...(options.signal ? { signal: options.signal } : {}),
              emit: emitInput,
            }),
          );
          let step = await stream.next();
          for (; !step.done; step = await stream.next()) yield await record(step.value);
          const outcome = step.value;
          if (outcome.status === 'completed' && outcome.output) {
            const bounded = boundPlannerBatches(outcome.output, { ...bounds, heuristic });
            if (bounded.batches.length > 0) {
              plan = bounded.batches;
              planSource = 'planner';
            }
            for (const problem of bounded.dropped)
              yield await record({ type: 'warning', stage: 'PLANNER', message: `planner batch dropped: ${problem}` });
            yield await record(
              plannerEnd('accepted', `${bounded.batches.length} ${bounded.batches.length === 1 ? 'batch' : 'batches'}`),
            );
          } else {
            yield await record(plannerEnd('rejected', outcome.status === 'completed' ? 'no plan' : outcome.message));
          }
        } catch (error) {
          const failure = toRatchetError(error);
          // A provider that cannot be used or reached (after the retries) would fail every batch too:
          // stop now, before anything is confirmed (seed 002, 19), rather than on the first patch.
          yield await record(plannerEnd('error', `${failure.code}: ${failure.message}`));
          if (['auth', 'config', 'interrupted', 'network'].includes(failure.code)) throw failure;
          yield await record({
            type: 'warning',
            stage: 'PLANNER',
            message: 'The planner failed; the heuristic plan stands.',
          });
        }
      }
      yield await record({ type: 'plan-create', batches: plan.length, source: planSource, goal: options.goal });
      return {
        run,
        repoRoot,
        target,
        settings,
        baseline,
        backup,
        index,
        artifacts,
        plan,
        planSource,
        verifierCommands: commands,
        sandbox,
        models,
      };
    } catch (error) {
      // Nothing was confirmed yet, so nothing is left behind: no worktree, no run branch (the
      // backup stays). The ledger keeps the run with its error, as dropped: there is nothing to
      // accept or resume.
      await sandbox?.[Symbol.asyncDispose]();
      await discardRunWorktree(git, worktree, branch);
      if (created) {
        const failure = toRatchetError(error);
        await services.ledger.updateRun(runId, { status: 'rejected', error: `${failure.code}: ${failure.message}` });
      }
      throw error;
    }
  } finally {
    await lock.release();
  }
}

/** The end of the run's one PLANNER attempt. */
function plannerEnd(outcome: 'accepted' | 'rejected' | 'error', reason: string): EventInput {
  return { type: 'stage-end', stage: 'PLANNER', phase: 'SETUP', cycle: 0, attempt: 1, outcome, reason };
}

/** The batch loop, the final full verifier and the run's end (seed 002, 18). */
export async function* executeRefactor(
  prepared: PreparedRefactor,
  options: RefactorOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RefactorOutcome> {
  const { run, settings, config } = { ...prepared, config: options.config };
  const git = new Git(prepared.repoRoot);
  const lock = await acquireRepoLock(await git.commonDir(), { runId: run.id });
  const record = recorder(
    createEnveloper(run.id, services.clock, await services.ledger.lastEventNumber(run.id)),
    services.ledger,
  );
  const worktreeGit = new Git(run.worktree);
  const prompts = await loadRolePrompts();
  // The agent's shell and the commands that run its code are sandboxed as in prepare (a warning
  // there said so when they could not be).
  const { sandbox } = prepared;
  // The planner's model clients: a replayed cassette continues, a recorded one grows, where the planner left it.
  const runtime = roleRuntime(
    config,
    services,
    settings,
    runDir(prepared.repoRoot, run.id),
    prepared.models,
    settings.claude.allowedTools,
    settings.claude.tools,
    sandbox,
  );
  // Every file the run writes (logs, the task ledger) holds no key, whatever it quotes.
  const redact = createRedactor(secretsFromEnv(services.env));
  const redactCommit = createRedactor(secretsFromEnv(services.env), { shapes: 'keys' });
  // The verifiers and the formatter run the patched code: in the same sandbox as the agent.
  const commandOptions = {
    cwd: run.worktree,
    repoRoot: prepared.repoRoot,
    outputDir: join(runDir(prepared.repoRoot, run.id), 'verify'),
    timeoutMs: config.test.timeoutMs,
    runner: sandbox.runner,
    environment: commandEnvironment(services.env, config.bash.env),
    redact,
  };
  const runCommands = createCommandsRunner(commandOptions);
  const verifier: RefactorVerifier = createCommandVerifier(
    { ...commandOptions, ...prepared.verifierCommands, baseline: prepared.baseline },
    runCommands,
  );
  const ledgerFile = join(prepared.artifacts, TASK_LEDGER_FILE);
  const isVerifierFile = verificationFileMatcher(
    [...prepared.verifierCommands.fast, ...prepared.verifierCommands.full],
    run.worktree,
  );
  let index = prepared.index;
  let apiReference: PublicApiSnapshot = snapshotPublicApi(index);
  let apiNow: PublicApiSnapshot = apiReference;
  // Between checkpoints only the files patches touched can differ from what was indexed (the
  // worktree is reset to the checkpoint between attempts): re-check just those, without walking
  // the tree. Any other move of HEAD (a reset to an older checkpoint) falls back to a full walk.
  let indexedAt = await worktreeGit.head();
  const touched = new Set<string>();
  const reindex = async (): Promise<CodeIndex> => {
    const head = await worktreeGit.head();
    const current = (await worktreeGit.status()).files.flatMap((file) =>
      file.origPath ? [file.path, file.origPath] : [file.path],
    );
    const changedPaths = head === indexedAt ? [...new Set([...touched, ...current])] : undefined;
    index = await buildIndex({
      root: run.worktree,
      cacheDir: join(prepared.repoRoot, '.ratchet', 'index'),
      excludes: settings.scopeExcludes,
      git: worktreeGit,
      previous: index,
      ...(changedPaths ? { changedPaths } : {}),
    });
    indexedAt = head;
    touched.clear();
    for (const path of current) touched.add(path);
    return index;
  };
  const deps: RefactorDependencies = {
    workspace: {
      root: run.worktree,
      head: () => worktreeGit.head(),
      async checkpoint(subject, body) {
        // The goal and the rationale come from the user and the model: no key goes into a commit.
        const message = redactCommit(body ? `${subject}\n\n${body}` : subject);
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
      return buildContextPack({ batch, index, readText: read, ledger, feedback });
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
    async apiChanges() {
      apiNow = snapshotPublicApi(await reindex());
      return compareApi(apiReference, apiNow);
    },
    async acceptApi() {
      apiReference = apiNow;
      // Called right after the checkpoint: the committed tree is the one just indexed.
      indexedAt = await worktreeGit.head();
      touched.clear();
    },
    async appendTaskLedger(entry) {
      await mkdir(prepared.artifacts, { recursive: true });
      await appendFile(ledgerFile, `${redact(JSON.stringify({ at: services.clock.now().toISOString(), ...entry }))}\n`);
    },
    now: () => services.clock.now(),
  };
  let outcome: RefactorOutcome;
  try {
    const loop = runBatchLoop(
      prepared.plan,
      deps,
      {
        retryPerBatch: settings.retryPerBatch,
        runFullVerifierEvery: settings.runFullVerifierEvery,
        allowPublicApiChanges: settings.allowPublicApiChanges,
        useCritic: options.useCritic,
        maxTurnsPatcher: settings.claude.maxTurnsPatcher,
        bashTimeoutMs: config.bash.timeoutMs,
        maxRuntimeMs: settings.maxRuntimeMinutes === null ? null : settings.maxRuntimeMinutes * 60_000,
      },
      options.signal,
    );
    let step = await loop.next();
    while (!step.done) {
      yield await record(step.value);
      step = await loop.next();
    }
    const result = step.value;
    // The final full verifier (seed 002, 18), also after an early stop whose last checkpoint passed
    // only the fast verifier: what the run leaves on its branch has passed the full verifier, or
    // the branch goes back to the newest checkpoint that did.
    let finalVerifier: VerifierRun | null = null;
    if (result.stopped === null || (!result.fullVerifierFailed && result.lastCheckpoint !== result.lastFullVerified)) {
      yield await record({ type: 'stage-start', stage: 'FULL_VERIFY', phase: 'SETUP', cycle: 0, attempt: 1 });
      finalVerifier = await verifier.run('full', 'FULL_VERIFY', options.signal);
      for (const entry of finalVerifier.results) {
        yield await record({
          type: 'verify-end',
          stage: 'FULL_VERIFY',
          kind: 'test',
          result: entry.result,
          outputFile: entry.outputFile,
        });
      }
      yield await record({
        type: 'stage-end',
        stage: 'FULL_VERIFY',
        phase: 'SETUP',
        cycle: 0,
        attempt: 1,
        outcome: finalVerifier.ok ? 'accepted' : 'rejected',
      });
      if (finalVerifier.ok)
        yield await record({ type: 'checkpoint-verify', commit: result.lastCheckpoint, level: 'full' });
      if (!finalVerifier.ok && result.lastCheckpoint !== result.lastFullVerified) {
        await deps.workspace.resetTo(result.lastFullVerified);
        yield await record({
          type: 'checkpoint-rollback',
          stage: 'FULL_VERIFY',
          to: result.lastFullVerified,
          reason: 'the final full verifier failed',
        });
        await markRolledBack(
          result.batches,
          result.lastFullVerified,
          `the final full verifier failed; reset to ${result.lastFullVerified.slice(0, 8)}`,
          prepared.plan,
          deps,
        );
        result.lastCheckpoint = result.lastFullVerified;
      }
    }
    const failed = result.stopped !== null || (finalVerifier !== null && !finalVerifier.ok);
    const finalFailure =
      finalVerifier !== null && !finalVerifier.ok
        ? `the final full verifier failed; reset to ${result.lastCheckpoint.slice(0, 8)}`
        : null;
    const message = [result.stopped, finalFailure].filter((part) => part !== null).join('; ');
    outcome = {
      runId: run.id,
      status: failed ? 'failed' : 'completed',
      loop: result,
      finalVerifier,
      error: failed ? new RatchetError('gate-failed', message) : null,
    };
  } catch (error) {
    const failure = toRatchetError(error);
    outcome = {
      runId: run.id,
      status: failure.code === 'interrupted' ? 'interrupted' : 'failed',
      loop: null,
      finalVerifier: null,
      error: failure,
    };
  } finally {
    await lock.release();
    // The run's private /tmp goes with the run.
    await prepared.sandbox[Symbol.asyncDispose]();
  }
  await services.ledger.updateRun(run.id, {
    status: outcome.status,
    error: outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : null,
  });
  yield await record({
    type: 'run-end',
    status: outcome.status,
    ...(outcome.error ? { message: outcome.error.message } : {}),
  });
  return outcome;
}
