/**
 * Harness for the resume / interrupt end-to-end tests: the built CLI (`dist/bundle/main.js`) as a
 * subprocess against a temporary node:test project, with the Anthropic provider pointed at the
 * loopback fake server answered by the stateless `resume-brain`.
 *
 * Nothing here mocks our modules: the CLI is the real binary, git, SQLite and `node --test` are
 * real. The ledger is read back through the real ledger module after the CLI has exited.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { HandoffStateSchema, NOTES_REF, type HandoffState } from '../../src/core/handoff.js';
import type { RatchetEvent } from '../../src/core/events.js';
import { REPO_LOCK_FILE } from '../../src/git/repo-lock.js';
import { openLedger, type Ledger, type RunRow } from '../../src/ledger/ledger.js';
import { ledgerPath } from '../../src/engine/run-paths.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from './fake-anthropic-server.js';
import { createResumeBrain, RESUME_PROJECT_FILES, type ResumeBrain } from './resume-brain.js';
import { sandboxForThisMachine } from './sandbox-for-this-machine.js';
import { createTempRepo, type TempRepo } from './temp-repo.js';

export const CLI_PATH = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));
export const RESUME_MODEL = 'claude-resume-model';
const API_KEY = 'sk-ant-resume-test-key';
/**
 * Per-test timeout of these end-to-end tests. Each does one to two runs of a two-cycle feature
 * (10-25 s on an idle two-core machine); the margin is for CI machines busy with other suites.
 */
export const E2E_TIMEOUT_MS = 120_000;
/** How long a held reply waits: far longer than any test, so a held call never completes. */
export const HOLD_MS = 30_000;

/** The fake provider shared by the tests of one file (the brain is stateless, so sharing is safe). */
export interface ResumeProvider {
  server: FakeAnthropicServer;
  brain: ResumeBrain;
  close(): Promise<void>;
}

export async function startResumeProvider(): Promise<ResumeProvider> {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run \`npm run build\` first (npm test does).`);
  const server = await startFakeAnthropicServer({ apiKey: API_KEY });
  const brain = createResumeBrain();
  server.setFallback((request) => brain.reply(request));
  return { server, brain, close: () => server.close() };
}

/**
 * The set-up a resume/interrupt test file shares: one fake provider for the file, and after each
 * test the brain's per-test behaviour reset and the projects that test made removed.
 */
export function useResumeSuite(): { readonly provider: ResumeProvider; newProject(): Promise<ResumeProject> } {
  let started: ResumeProvider | undefined;
  const projects: ResumeProject[] = [];
  const suite = {
    get provider(): ResumeProvider {
      if (started === undefined) throw new Error('The resume provider starts in beforeAll.');
      return started;
    },
    async newProject(): Promise<ResumeProject> {
      const project = await createResumeProject(suite.provider);
      projects.push(project);
      return project;
    },
  };
  beforeAll(async () => {
    started = await startResumeProvider();
  });
  afterEach(async () => {
    if (started !== undefined) {
      started.brain.delayMs = undefined;
      started.brain.override = undefined;
    }
    for (const project of projects.splice(0)) await project.cleanup();
  });
  afterAll(async () => {
    await started?.close();
  });
  return suite;
}

/** A fresh project repository plus a private RATCHET_HOME. */
export interface ResumeProject {
  repo: TempRepo;
  home: string;
  /** Environment for the CLI: isolated git, the fake provider, RATCHET_HOME. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * A test of the project that the harness can hold: while the hold file exists and names a file
 * of the worktree containing a given text, the test marks `<tmp>/<marker>` and waits until the
 * hold file is removed. So "the suite is running right now" is a state the test can wait for
 * instead of a moment it has to hit. Without the hold file it passes at once. The hold file is in
 * the checkout's git directory, which the tool sandbox shows read-only (and live); the marker goes
 * to the test's temporary directory: the run's private /tmp in the sandbox, the host's without.
 */
function holdTestFile(holdPath: string, marker: string): string {
  return `import { test } from 'node:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const HOLD = ${JSON.stringify(holdPath)};

test('the suite runs while the harness allows it', async () => {
  if (!existsSync(HOLD)) return;
  const { file, contains } = JSON.parse(readFileSync(HOLD, 'utf8'));
  if (!existsSync(file) || !readFileSync(file, 'utf8').includes(contains)) return;
  writeFileSync(join(tmpdir(), ${JSON.stringify(marker)}), String(process.pid));
  while (existsSync(HOLD)) await sleep(20);
});
`;
}

/** Where the harness holds the suite (see `holdTestFile`). */
function holdFile(project: ResumeProject): string {
  return join(project.repo.dir, '.git', 'ratchet-hold-tests');
}

function holdMarker(project: ResumeProject): string {
  return `ratchet-hold-tests-${basename(project.repo.root)}.running`;
}

/** The markers of held suite runs: in the host's temporary directory, or in a run's private /tmp. */
function heldMarkers(project: ResumeProject): string[] {
  const name = holdMarker(project);
  const areas = join(project.home, 'tmp');
  const private_ = existsSync(areas) ? readdirSync(areas).map((area) => join(areas, area, 'tmp', name)) : [];
  return [join(tmpdir(), name), ...private_].filter((path) => existsSync(path));
}

export async function createResumeProject(provider: ResumeProvider): Promise<ResumeProject> {
  const repo = await createTempRepo({ files: { ...RESUME_PROJECT_FILES } });
  await repo.write({
    'test/hold.test.js': holdTestFile(
      join(repo.dir, '.git', 'ratchet-hold-tests'),
      `ratchet-hold-tests-${basename(repo.root)}.running`,
    ),
  });
  repo.run('add', '-A');
  repo.run('commit', '--quiet', '-m', 'a test the harness can hold');
  // Where bubblewrap is missing the runs opt out of the sandbox (untracked, so the tree stays clean).
  const sandbox = sandboxForThisMachine();
  if (sandbox.off) await repo.write({ '.ratchet/config.toml': sandbox.config() });
  const home = repo.path('ratchet-home');
  await mkdir(home, { recursive: true });
  const env = {
    ...repo.env,
    RATCHET_HOME: home,
    ANTHROPIC_BASE_URL: provider.server.url,
    ANTHROPIC_API_KEY: API_KEY,
    NO_COLOR: '1',
  };
  const project: ResumeProject = {
    repo,
    home,
    env,
    cleanup: async () => {
      await releaseTests(project);
      await releaseCommit(project);
      await repo.cleanup();
    },
  };
  return project;
}

/** Variables that would leak the developer's setup into the CLI under test. */
const DROPPED_ENV = /^(TDD_|RATCHET_|ANTHROPIC_|OPENAI_|OLLAMA_|FORCE_COLOR$|NODE_OPTIONS$|VITEST)/;

function cliEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !DROPPED_ENV.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Every stdout line that parsed as JSON (events and command results). */
  lines: unknown[];
  /** The engine events among them. */
  events: RatchetEvent[];
}

export interface CliProcess {
  child: ChildProcess;
  readonly events: RatchetEvent[];
  /**
   * Resolves with the first event (seen so far or still to come) that matches and comes after
   * `after` (when given); rejects if the CLI exits first.
   */
  waitForEvent(predicate: (event: RatchetEvent) => boolean, what: string, after?: RatchetEvent): Promise<RatchetEvent>;
  /** Resolves when stderr (so far or later) matches; rejects if the CLI exits first. */
  waitForStderr(pattern: RegExp): Promise<void>;
  /** Sends a signal to the CLI process. */
  kill(signal: NodeJS.Signals): void;
  /** Sends a signal to the CLI's whole process group (needs `processGroup: true`). */
  signalGroup(signal: NodeJS.Signals): void;
  readonly exited: Promise<CliResult>;
}

function isEvent(value: unknown): value is RatchetEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    'type' in value &&
    typeof value.type === 'string' &&
    'runId' in value &&
    'id' in value
  );
}

export interface StartCliOptions {
  /**
   * Start the CLI as the leader of its own process group, like a shell's foreground job, so
   * `signalGroup` can deliver what a terminal's Ctrl-C delivers: SIGINT to every process in it.
   */
  processGroup?: boolean;
}

/** Starts `node dist/bundle/main.js --cwd <repo> ...args`. */
export function startCli(project: ResumeProject, args: readonly string[], options: StartCliOptions = {}): CliProcess {
  const child = spawn(process.execPath, [CLI_PATH, '--cwd', project.repo.dir, ...args], {
    cwd: project.repo.dir,
    env: cliEnv(project.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup === true,
  });
  const events: RatchetEvent[] = [];
  const lines: unknown[] = [];
  let stdout = '';
  let stderr = '';
  let pending = '';
  const waiters = new Set<{
    predicate: (event: RatchetEvent) => boolean;
    resolve: (event: RatchetEvent) => void;
    reject: (error: Error) => void;
    what: string;
  }>();
  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return;
    }
    lines.push(value);
    if (!isEvent(value)) return;
    events.push(value);
    for (const waiter of waiters) {
      if (waiter.predicate(value)) {
        waiters.delete(waiter);
        waiter.resolve(value);
      }
    }
  };
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) onLine(part);
  });
  const stderrWaiters = new Set<{ pattern: RegExp; resolve: () => void; reject: (error: Error) => void }>();
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of stderrWaiters) {
      if (waiter.pattern.test(stderr)) {
        stderrWaiters.delete(waiter);
        waiter.resolve();
      }
    }
  });
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      onLine(pending);
      pending = '';
      for (const waiter of waiters) {
        waiter.reject(
          new Error(
            `The CLI exited (code ${String(code)}, signal ${String(signal)}) before ${waiter.what}.\nstderr:\n${stderr}\nstdout tail:\n${stdout.slice(-3000)}`,
          ),
        );
      }
      waiters.clear();
      for (const waiter of stderrWaiters)
        waiter.reject(new Error(`The CLI exited before its stderr matched ${String(waiter.pattern)}:\n${stderr}`));
      stderrWaiters.clear();
      resolve({ code, signal, stdout, stderr, lines, events });
    });
  });
  return {
    child,
    events,
    exited,
    waitForEvent(predicate, what, after) {
      const from = after === undefined ? 0 : events.indexOf(after) + 1;
      if (after !== undefined && from === 0)
        return Promise.reject(new Error(`waitForEvent(${what}): 'after' is not an event of this CLI run.`));
      const seen = events.slice(from).find(predicate);
      if (seen) return Promise.resolve(seen);
      if (child.exitCode !== null || child.signalCode !== null)
        return Promise.reject(new Error(`The CLI already exited before ${what}.`));
      return new Promise((resolve, reject) => waiters.add({ predicate, resolve, reject, what }));
    },
    waitForStderr(pattern) {
      if (pattern.test(stderr)) return Promise.resolve();
      if (child.exitCode !== null || child.signalCode !== null)
        return Promise.reject(new Error(`The CLI already exited; stderr:\n${stderr}`));
      return new Promise((resolve, reject) => stderrWaiters.add({ pattern, resolve, reject }));
    },
    kill(signal) {
      child.kill(signal);
    },
    signalGroup(signal) {
      if (!options.processGroup || child.pid === undefined)
        throw new Error('signalGroup needs startCli(..., { processGroup: true })');
      process.kill(-child.pid, signal);
    },
  };
}

/** Runs the CLI to its end. */
export function runCli(project: ResumeProject, args: readonly string[]): Promise<CliResult> {
  return startCli(project, args).exited;
}

/** `--provider anthropic --model claude-resume-model`, as every run and resume passes it. */
export const PROVIDER_ARGS = ['--provider', 'anthropic', '--model', RESUME_MODEL] as const;

export function tddArgs(): string[] {
  return ['tdd', 'Build a tiny arithmetic module', ...PROVIDER_ARGS, '--json'];
}

/** No provider flags: `resume` takes the provider and model the run recorded when it started. */
export function resumeArgs(runId?: string): string[] {
  return ['resume', ...(runId === undefined ? [] : [runId]), '--json'];
}

/** Describes a finished CLI run for assertion messages. */
export function describeResult(result: CliResult): string {
  return `exit ${String(result.code)} signal ${String(result.signal)}\nstderr:\n${result.stderr}\nstdout tail:\n${result.stdout.slice(-4000)}`;
}

/** The single JSON line a `--json` query command printed; throws when there is not exactly one. */
export function onlyLine(result: CliResult): unknown {
  if (result.lines.length !== 1)
    throw new Error(`expected one JSON line, got ${result.lines.length}: ${describeResult(result)}`);
  return result.lines[0];
}

const ErrorLineSchema = z.object({
  type: z.literal('error'),
  code: z.string(),
  message: z.string(),
  hint: z.string().nullable(),
});

/** The `{"type":"error",...}` line the CLI prints in --json mode when a command fails. */
export function errorLine(result: CliResult): z.infer<typeof ErrorLineSchema> {
  return ErrorLineSchema.parse(onlyLine(result));
}

/** Runs `ratchet resume` until it exits 0 (at most `maxRuns` times); returns every result. */
export async function resumeUntilDone(
  project: ResumeProject,
  runId: string | undefined,
  maxRuns = 3,
): Promise<CliResult[]> {
  const results: CliResult[] = [];
  for (let index = 0; index < maxRuns; index++) {
    const result = await runCli(project, resumeArgs(runId));
    results.push(result);
    if (result.code === 0) return results;
    if (result.lines.some((line) => ErrorLineSchema.safeParse(line).data?.code === 'locked')) {
      throw new Error(`ratchet resume refused with a lock error: ${describeResult(result)}`);
    }
  }
  throw new Error(
    `ratchet resume did not finish in ${maxRuns} runs; last: ${describeResult(results[results.length - 1] ?? { code: null, signal: null, stdout: '', stderr: '', lines: [], events: [] })}`,
  );
}

// ---- Reading the outcome back ----

export async function withLedger<T>(project: ResumeProject, use: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openLedger(ledgerPath(project.repo.dir), { secrets: [] });
  try {
    return await use(ledger);
  } finally {
    await ledger.close();
  }
}

export async function ledgerRun(project: ResumeProject, runId: string): Promise<RunRow> {
  const run = await withLedger(project, (ledger) => ledger.getRun(runId));
  if (!run) throw new Error(`run ${runId} is not in the ledger`);
  return run;
}

/** The `run-start` events of a run, in ledger order. */
export async function runStarts(project: ResumeProject, runId: string): Promise<Array<{ resumed: boolean }>> {
  const events = await withLedger(project, (ledger) => ledger.events(runId, { types: ['run-start'] }));
  return events.flatMap((event) => (event.type === 'run-start' ? [{ resumed: event.resumed }] : []));
}

export interface BranchCommit {
  sha: string;
  subject: string;
}

/** `git log <base>..ratchet/<id>`, oldest first. */
export function branchCommits(project: ResumeProject, baseCommit: string, runId: string): BranchCommit[] {
  const out = project.repo.run('log', '--reverse', '--format=%H %s', `${baseCommit}..ratchet/${runId}`);
  if (out === '') return [];
  return out.split('\n').map((line) => {
    const space = line.indexOf(' ');
    return { sha: line.slice(0, space), subject: line.slice(space + 1) };
  });
}

/** The parsed handoff note on `sha`; throws when it is missing or does not parse. */
export function handoffNote(project: ResumeProject, sha: string): HandoffState {
  const text = project.repo.run('notes', `--ref=${NOTES_REF}`, 'show', sha);
  return HandoffStateSchema.parse(JSON.parse(text));
}

/** Path of the repository lock file (`<commonDir>/ratchet.lock`). */
export function lockPath(project: ResumeProject): string {
  return join(project.repo.dir, '.git', REPO_LOCK_FILE);
}

export async function readLockPid(project: ResumeProject): Promise<number | null> {
  if (!existsSync(lockPath(project))) return null;
  const parsed: unknown = JSON.parse(await readFile(lockPath(project), 'utf8'));
  return typeof parsed === 'object' && parsed !== null && 'pid' in parsed && typeof parsed.pid === 'number'
    ? parsed.pid
    : null;
}

/** `git status --porcelain` of the run's worktree. */
export function worktreeStatus(project: ResumeProject, worktree: string): string {
  return project.repo.run('-C', worktree, 'status', '--porcelain', '--untracked-files=all');
}

export async function worktreeTestList(worktree: string): Promise<string> {
  return readFile(join(worktree, 'test-list.md'), 'utf8');
}

/** The run id of the first `run-start` event. */
export function runIdOf(events: readonly RatchetEvent[]): string {
  const start = events.find((event) => event.type === 'run-start');
  if (!start) throw new Error('no run-start event');
  return start.runId;
}

// ---- Holding the project's test suite (see holdTestFile) ----

/** From now on, a suite run in which `file` (relative to the worktree) contains `contains` blocks. */
export async function holdTestsWhen(project: ResumeProject, file: string, contains: string): Promise<void> {
  await writeFile(holdFile(project), JSON.stringify({ file, contains }));
}

async function waitForFile(path: string, what: string, timeoutMs: number): Promise<void> {
  for (let waited = 0; !existsSync(path); waited += 20) {
    if (waited > timeoutMs) throw new Error(`${what} did not happen.`);
    await sleep(20);
  }
}

/** Resolves once a held suite run has started (or rejects after `timeoutMs`). */
export async function waitForHeldTests(project: ResumeProject, timeoutMs = 45_000): Promise<void> {
  for (let waited = 0; heldMarkers(project).length === 0; waited += 20) {
    if (waited > timeoutMs) throw new Error('A held test run did not happen.');
    await sleep(20);
  }
}

export function testsAreHeld(project: ResumeProject): boolean {
  return heldMarkers(project).length > 0;
}

/** Lets held and future suite runs finish. */
export async function releaseTests(project: ResumeProject): Promise<void> {
  await rm(holdFile(project), { force: true });
  for (const marker of heldMarkers(project)) await rm(marker, { force: true });
}

// ---- Holding or killing git inside a checkpoint ----
//
// Ratchet's git runs no hook (not even the user's), so the harness cannot step into a commit from
// `.git/hooks`. It puts a `git` of its own first on the CLI's PATH instead: it runs the real git,
// and after a `git ... commit` that made a commit whose subject starts with the armed prefix it
// holds or dies, still inside the checkpoint (the commit exists, the note does not yet).

/**
 * Puts a `git` in front of the real one on the CLI's PATH (`project.env.PATH`): after a commit
 * whose subject starts with the prefix in `<root>/<armed>` (while that file exists), it runs
 * `action` (shell, with `$ARMED` set) before returning git's status.
 */
async function wrapCommits(project: ResumeProject, armed: string, action: string): Promise<void> {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const dir = project.repo.path('git-wrapper');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'git'),
    `#!/bin/sh
REAL=${JSON.stringify(real)}
ARMED=${JSON.stringify(project.repo.path(armed))}
"$REAL" "$@"
status=$?
[ "$status" = 0 ] && [ -f "$ARMED" ] || exit "$status"
committing=
for arg in "$@"; do [ "$arg" = commit ] && committing=1; done
[ -n "$committing" ] || exit 0
case "$("$REAL" log -1 --format=%s)" in
  "$(cat "$ARMED")"*) ;;
  *) exit 0 ;;
esac
${action}
exit 0
`,
    { mode: 0o755 },
  );
  project.env.PATH = `${dir}:${process.env.PATH ?? ''}`;
}

/**
 * While `<root>/hold-git` exists, holds the checkpoint commit whose subject starts with
 * `subjectPrefix` after it was made: git is then still running inside the checkpoint. Marks
 * `<root>/hold-git.running`.
 */
export async function holdCommitWhen(project: ResumeProject, subjectPrefix: string): Promise<void> {
  await wrapCommits(project, 'hold-git', ': > "$ARMED.running"\nwhile [ -f "$ARMED" ]; do sleep 0.05; done');
  await writeFile(project.repo.path('hold-git'), subjectPrefix);
}

export async function waitForHeldCommit(project: ResumeProject, timeoutMs = 45_000): Promise<void> {
  await waitForFile(project.repo.path('hold-git.running'), 'A held checkpoint commit', timeoutMs);
}

export async function releaseCommit(project: ResumeProject): Promise<void> {
  await rm(project.repo.path('hold-git'), { force: true });
  await rm(project.repo.path('hold-git.running'), { force: true });
}

/**
 * Kills the checkpoint's `git commit` (SIGKILL) once, for the first commit whose subject starts
 * with `subjectPrefix`: the commit exists, but git died before the checkpoint finished, as after
 * an OOM kill. Then disarms itself.
 */
export async function killCommitOnceWhen(project: ResumeProject, subjectPrefix: string): Promise<void> {
  await wrapCommits(project, 'kill-git-armed', 'rm -f "$ARMED"\nkill -KILL $$');
  await writeFile(project.repo.path('kill-git-armed'), subjectPrefix);
}
