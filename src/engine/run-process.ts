import { join } from 'node:path';
import { RatchetError, toRatchetError } from '../core/errors.js';
import { Git } from '../git/git.js';
import { handsOver, type EventInput, type RatchetEvent } from '../core/events.js';
import { createRedactor, secretsFromEnv } from '../core/redact.js';
import { stageModelOverrideNotice, type ResolvedConfig } from '../config/resolved.js';
import type { RunAgents, RunModels } from '../agent/models/run-models.js';
import { commandEnvironment } from '../process/env.js';
import { editableInstallPaths } from '../verify/editable-installs.js';
import type { Ledger } from '../ledger/types.js';
import type { AnyWorkflow, RunContext, RunInfo, RunStart, WorkflowTypes } from '../workflows/definition.js';
import { PYTHON_ENVIRONMENTS, withEditableInstalls } from './editable-install-env.js';
import type { EngineServices } from './effects.js';
import type { Recorder } from './recorder.js';
import { runDir } from './run-paths.js';
import { releaseRunWorktree } from './worktree-setup.js';
import { toolSandbox } from './tool-sandbox.js';
import { createLocalTasks } from './tasks/local-pool.js';
import { createRemoteTasks } from './tasks/remote-tasks.js';
import { createTaskSpaces } from './tasks/task-spaces.js';

/** How a run's process ended (`cancelled`: the run was dropped at the confirmation after its preparing steps). */
export interface RunOutcome<Result = unknown> {
  runId: string;
  status: 'completed' | 'partial' | 'failed' | 'interrupted' | 'cancelled';
  error: RatchetError | null;
  /** What the workflow's steps returned; null unless they completed. */
  result: Result | null;
  /** Whether `ratchet resume` continues the run (its workflow resumes runs). */
  resumable: boolean;
}

/** One process of a run, from its sandbox to its `run-end`. */
export interface RunProcess {
  definition: AnyWorkflow;
  run: RunInfo;
  settings: unknown;
  config: ResolvedConfig;
  models: RunModels;
  record: Recorder;
  services: Omit<EngineServices, 'ledger'> & { ledger: Ledger };
  signal?: AbortSignal;
  /** A new run (its preparing steps, the confirmation) or a resumed one. */
  from:
    | { kind: 'start'; confirm?: (prepared: unknown, run: RunInfo) => Promise<boolean> }
    | { kind: 'resume'; state: unknown };
  /** A new run dropped before its steps began (a setup failure, or the confirmation declined). */
  drop(error: RatchetError | null): Promise<void>;
}

/**
 * The part of the lifecycle every process of a run shares: the sandbox (removed, its private
 * /tmp with it, when the process ends, however it ends), the agents, the workflow's steps driven
 * through the recording seam, the stage attempts a stop cut short, the ledger's status and the
 * `run-end`. Before its steps begin, a new run that fails is dropped (nothing of it is worth
 * keeping: its worktree and branch go; the ledger keeps it as failed, with its error, or as
 * rejected when the user interrupted it) and the error is thrown; once they began, a failure or
 * an interruption is the run's outcome, and its checkpoints stay.
 */
export async function* runProcess(process: RunProcess): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { definition, run, config, services, record } = process;
  const resumable = definition.resume !== undefined;
  const fresh = process.from.kind === 'start';
  let started = !fresh;
  let sandbox: Awaited<ReturnType<typeof toolSandbox>> | undefined;
  try {
    sandbox = withEditableInstalls(
      await toolSandbox(config, services.runner, {
        protect: [...new Set([run.repoRoot, run.target, ...run.hidden])],
        worktree: run.worktree,
        dependenciesOf: run.target,
        runId: run.id,
      }),
      await editableInstallPaths(run.target, run.worktree, PYTHON_ENVIRONMENTS),
    );
    yield await record({ type: 'sandbox-start', ...sandbox.start });
    // `--model` won over `[stages.*] model` settings: said, never silent.
    const overridden = stageModelOverrideNotice(config, definition.modelStages);
    if (overridden !== null) yield await record({ type: 'warning', message: overridden });
    const { context, agents } = runContext(process, sandbox);
    // The recording seam; a replayed run records how far its cassette got with each checkpoint
    // (`resume` continues there).
    const seam: Recorder = (event) =>
      record(event.type === 'checkpoint-create' ? { ...event, ...agents.checkpointFields() } : event);
    let from: RunStart<WorkflowTypes>;
    if (process.from.kind === 'start') {
      const prepared = definition.prepare ? yield* recorded(definition.prepare(context), seam) : undefined;
      if (process.from.confirm && !(await process.from.confirm(prepared, run))) {
        await sandbox[Symbol.asyncDispose]();
        await process.drop(null);
        return { runId: run.id, status: 'cancelled', error: null, result: null, resumable };
      }
      from = { kind: 'start', prepared };
    } else {
      from = process.from;
    }
    started = true;
    const box = sandbox;
    return yield* driveSteps(process, definition.run(context, from), seam, async (handedOver) => {
      if (handedOver) await box.restoreShared();
      return box.takeNotices();
    });
  } catch (error) {
    if (started) throw error;
    // Before its steps: nothing of the run is worth keeping (nothing was confirmed either).
    await process.drop(toRatchetError(error));
    throw error;
  } finally {
    await sandbox?.[Symbol.asyncDispose]();
    // A worktree that holds nothing once the steps end goes now, not at `reject` (its branch stays).
    // Failing to remove it changes no outcome: `reject` removes what is left.
    if (started && definition.releasesWorktree === true)
      await releaseRunWorktree(new Git(run.repoRoot), run.worktree).catch(() => undefined);
  }
}

/** The ports a workflow's steps get: the sandbox's runners, the agents, redactors, the run's folder. */
function runContext(
  process: RunProcess,
  sandbox: Awaited<ReturnType<typeof toolSandbox>>,
): { context: RunContext<unknown>; agents: RunAgents } {
  const { run, config, services } = process;
  const environment = commandEnvironment(services.env, config.bash.env);
  const folder = runDir(run.repoRoot, run.id);
  const agents = process.models.open({
    toolRunner: sandbox.runner,
    cliRunner: sandbox.claudeRunner,
    environment,
    promptDir: join(folder, 'prompts'),
  });
  const context: RunContext<unknown> = {
    run,
    settings: process.settings,
    config,
    // What the model wrote runs in the same sandbox as its shell.
    commands: { runner: sandbox.runner, environment },
    agents,
    // Logs keep no secret whatever a command printed; commit messages and handoff notes keep no
    // key either (a test name the model wrote may hold one), though the user's text is kept as written.
    redact: {
      stored: createRedactor(secretsFromEnv(services.env)),
      commits: createRedactor(secretsFromEnv(services.env), { shapes: 'keys' }),
    },
    clock: services.clock,
    runDir: folder,
    taskSpaces: createTaskSpaces({
      run,
      config,
      models: process.models,
      runner: services.runner,
      env: services.env,
      runDir: folder,
    }),
    ...localTasks(process, folder),
    remoteTasks: createRemoteTasks(run, config.home, services.env, process.signal),
    ...(process.signal ? { signal: process.signal } : {}),
  };
  return { context, agents };
}

/**
 * Worker processes for a tasks run's tasks, when the services name their executable. Not for a
 * replayed or recorded model: a cassette is one sequence of calls, read or written by one process.
 */
function localTasks(process: RunProcess, folder: string): Pick<RunContext<unknown>, 'localTasks'> {
  const { services, config, run } = process;
  const entry = services.workerProcess;
  if (entry === undefined || config.provider.name === 'replay' || process.models.stored.record !== undefined) return {};
  return {
    localTasks: createLocalTasks({
      run,
      config,
      runDir: folder,
      env: services.env,
      entry,
      ...(process.signal ? { signal: process.signal } : {}),
    }),
  };
}

/** Drives steps through the recording seam: each event is recorded, then yielded. */
async function* recorded<T>(steps: AsyncGenerator<EventInput, T>, record: Recorder): AsyncGenerator<RatchetEvent, T> {
  for (;;) {
    const next = await steps.next();
    if (next.done) return next.value;
    yield await record(next.value);
  }
}

/**
 * Drives the run's steps to their end: each event through the seam; a failure or an interruption
 * is the outcome. The stage attempts it cut short end as errors (innermost first), so `status`
 * and the report do not show them as still open once the run has stopped; then the ledger's
 * status and the `run-end`.
 */
async function* driveSteps(
  process: RunProcess,
  steps: AsyncGenerator<EventInput, unknown>,
  seam: Recorder,
  /**
   * The sandbox's warnings (a shared dependency folder restored), shown before the step's next
   * event; `handedOver` (a stage's end, a checkpoint, the steps' end) restores the folders first.
   */
  notices: (handedOver: boolean) => Promise<string[]>,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { run, services } = process;
  const resumable = process.definition.resume !== undefined;
  // Stage attempts started and not yet ended, oldest first: a run that stops inside one closes it.
  const open: StartedStage[] = [];
  let outcome: RunOutcome & { status: 'completed' | 'partial' | 'failed' | 'interrupted' };
  try {
    for (;;) {
      const next = await steps.next();
      for (const message of await notices(next.done === true || handsOver(next.value)))
        yield await seam({ type: 'warning', message });
      if (next.done) {
        outcome = { runId: run.id, status: 'completed', error: null, result: next.value, resumable };
        break;
      }
      trackOpenStages(open, next.value);
      yield await seam(next.value);
    }
  } catch (error) {
    const failure = interruptionBySignal(toRatchetError(error), process.signal);
    const status = failure.code === 'interrupted' ? 'interrupted' : isPartial(failure) ? 'partial' : 'failed';
    outcome = { runId: run.id, status, error: failure, result: null, resumable };
    // A run that stopped mid-stage leaves the worktree as the agent left it: its folders go back.
    for (const message of await notices(true)) yield await seam({ type: 'warning', message });
  }
  for (const started of open.reverse()) {
    const { stage, phase, cycle, attempt } = started;
    const reason = outcome.error?.code ?? 'internal';
    yield await seam({ type: 'stage-end', stage, phase, cycle, attempt, outcome: 'error', reason });
  }
  const { status, error } = outcome;
  await services.ledger.updateRun(run.id, {
    status,
    error: error ? `${error.code}: ${error.message}` : null,
    finishedAt: services.clock.now().toISOString(),
  });
  yield await seam({ type: 'run-end', status, ...(error ? { message: error.message } : {}) });
  return outcome;
}

/**
 * An interruption says what interrupted the run when the run's signal was aborted with a signal's
 * name (the CLI aborts with `Error('SIGINT')` or `Error('SIGTERM')`): `details.signal`, and a bare
 * "Interrupted" becomes `Interrupted by SIGINT` (a message that says more, such as "Interrupted
 * while running the tests", is kept). Anything else is returned as it is.
 */
function interruptionBySignal(failure: RatchetError, signal: AbortSignal | undefined): RatchetError {
  if (failure.code !== 'interrupted' || !signal?.aborted) return failure;
  const reason: unknown = signal.reason;
  const name = reason instanceof Error && /^SIG[A-Z0-9]+$/.test(reason.message) ? reason.message : undefined;
  if (name === undefined) return failure;
  const message = failure.message === 'Interrupted' ? `Interrupted by ${name}` : failure.message;
  return new RatchetError('interrupted', message, {
    cause: failure,
    ...(failure.hint ? { hint: failure.hint } : {}),
    details: { ...failure.details, signal: name },
  });
}

/**
 * A failure that leaves part of the run's work done and kept: a gate failure whose
 * `details.reason` is `partial` (a workflow's contract with the engine, whatever the workflow).
 */
function isPartial(failure: RatchetError): boolean {
  return failure.code === 'gate-failed' && failure.details?.reason === 'partial';
}

type StartedStage = Extract<EventInput, { type: 'stage-start' }>;

/** Keeps `open` to the stage attempts `event` leaves started and not yet ended. */
function trackOpenStages(open: StartedStage[], event: EventInput): void {
  if (event.type === 'stage-start') {
    open.push({ ...event });
    return;
  }
  if (event.type !== 'stage-end') return;
  const index = open.findLastIndex(
    (started) => started.stage === event.stage && started.cycle === event.cycle && started.attempt === event.attempt,
  );
  if (index >= 0) open.splice(index, 1);
}
