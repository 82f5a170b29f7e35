/**
 * Plumbing of the end-to-end tests of `ratchet refactor`: a fixture repository with its
 * `.refactor-bot.config.json` (pointing `claude.binary` at the real, pinned Claude Code CLI),
 * the fake Anthropic server with the refactor brain behind it, the environment that points the
 * CLI at the fake (temporary HOME, API key, no nonessential traffic, no CLI retries), and
 * readers for what a run leaves behind: events, the ledger, the tree, the report in Chromium.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { claudeBinary, claudeBinaryProblem } from './claude-binary.js';
import { E2E_API_KEY, createProjectRepo, type ProjectRepo } from './e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from './fake-anthropic-server.js';
import { createRefactorBrain, type RefactorBrain, type RefactorBrainScript } from './refactor-brain.js';
import type { FileMap } from './refactor-fixtures.js';
import { cliEnv, describeResult, parseNdjson, runCli, type CliResult, type JsonLine } from './run-cli.js';

export interface RefactorBotConfig {
  diff_budget_loc: number;
  max_batches: number;
  retry_per_batch: number;
  run_full_verifier_every: number;
  fast_verifier: string[];
  full_verifier: string[];
  scope_excludes: string[];
  allow_public_api_changes: boolean;
  claude: { binary: string; allowed_tools: string; max_turns_patcher: number; max_turns_planner: number };
}

/**
 * Where the real Claude Code CLI is not installed, the path the config names instead: the suites
 * that start it are skipped there (`toolchain('claude')`), and the others never start it.
 */
const CLAUDE_NOT_INSTALLED = '/claude-code-is-not-installed/claude';

/** The seed's config file for a fixture: small budgets, one retry, the real claude binary (when installed). */
export function refactorConfig(
  verifiers: { fast: string[]; full: string[] },
  overrides: Partial<RefactorBotConfig> = {},
): RefactorBotConfig {
  return {
    diff_budget_loc: 40,
    max_batches: 10,
    retry_per_batch: 1,
    run_full_verifier_every: 2,
    fast_verifier: verifiers.fast,
    full_verifier: verifiers.full,
    scope_excludes: ['**/node_modules/**', '**/.venv/**', '**/dist/**'],
    allow_public_api_changes: false,
    claude: {
      binary: claudeBinaryProblem() === null ? claudeBinary() : CLAUDE_NOT_INSTALLED,
      allowed_tools: 'Read,Grep,Glob',
      max_turns_patcher: 4,
      max_turns_planner: 3,
    },
    ...overrides,
  };
}

export function configFile(config: RefactorBotConfig): FileMap {
  return { '.refactor-bot.config.json': `${JSON.stringify(config, null, 2)}\n` };
}

export interface RefactorModel {
  server: FakeAnthropicServer;
  brain: RefactorBrain;
}

export async function startRefactorModel(script: RefactorBrainScript): Promise<RefactorModel> {
  const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
  const brain = createRefactorBrain(script);
  server.setFallback((request) => brain.reply(request));
  return { server, brain };
}

/** Keeps pytest fast and the trees free of caches (the fixtures ignore them too). */
const TOOL_ENV = { PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1', PYTHONDONTWRITEBYTECODE: '1' };

/**
 * The CLI's environment: git isolated as in the temp repo (whose empty HOME is also the claude
 * CLI's HOME, so no real credentials or settings are found), `RATCHET_HOME`, and the claude CLI
 * pointed at the fake. `apiKey: null` leaves the CLI without any credentials.
 */
export function claudeEnv(
  repo: ProjectRepo,
  server: FakeAnthropicServer | null,
  options: { apiKey?: string | null } = {},
): Record<string, string> {
  const apiKey = options.apiKey === undefined ? E2E_API_KEY : options.apiKey;
  return {
    ...repo.env,
    ...TOOL_ENV,
    RATCHET_HOME: repo.home,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...(server ? { ANTHROPIC_BASE_URL: server.url } : {}),
    ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}),
  };
}

/** A git repository with `files` (and nothing else) in its first commit. */
export async function createRefactorRepo(files: FileMap): Promise<ProjectRepo> {
  return createProjectRepo(files);
}

/** Runs `ratchet ...args` in `cwd`; 150 s by default (a whole run drives a dozen CLI calls). */
export function ratchet(
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 150_000,
): Promise<CliResult> {
  return runCli(args, { cwd, env, timeoutMs });
}

/** Throws with the CLI's output unless it exited with `code`. */
export function expectExit(result: CliResult, code: number): void {
  if (result.exitCode !== code) throw new Error(`expected exit ${code}, got ${describeResult(result)}`);
}

export const PlanLineSchema = z.looseObject({
  type: z.literal('plan'),
  run: z.string(),
  batches: z.array(z.looseObject({ id: z.string(), goal: z.string(), scope_globs: z.array(z.string()) })),
});
export const ReportLineSchema = z.looseObject({
  type: z.literal('report'),
  run: z.string(),
  status: z.string(),
  markdown: z.string(),
  html: z.string(),
});

/** The run id, plan and report of `refactor run --json` output, and every event line. */
export function readRunOutput(result: CliResult): {
  lines: JsonLine[];
  runId: string;
  plan: z.infer<typeof PlanLineSchema>;
  report: z.infer<typeof ReportLineSchema> | null;
} {
  const lines = parseNdjson(result.stdout);
  const plan = PlanLineSchema.parse(lines.find((line) => line.type === 'plan'));
  const reportLine = lines.find((line) => line.type === 'report');
  return { lines, runId: plan.run, plan, report: reportLine ? ReportLineSchema.parse(reportLine) : null };
}

export function eventsOf(lines: readonly JsonLine[], type: string): JsonLine[] {
  return lines.filter((line) => line.type === type);
}

/**
 * Every file under `dir` with the SHA-256 of its content, except `.git` (and any other top-level
 * names in `skip`); symlinks are recorded by their target.
 */
export function treeHashes(dir: string, skip: readonly string[] = ['.git']): Record<string, string> {
  const result: Record<string, string> = {};
  const visit = (path: string, relative: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (!relative && skip.includes(entry.name)) continue;
      const full = join(path, entry.name);
      if (entry.isDirectory()) visit(full, name);
      else if (entry.isSymbolicLink()) result[name] = `link`;
      else result[name] = createHash('sha256').update(readFileSync(full)).digest('hex');
    }
  };
  visit(dir, '');
  return result;
}

/** `git for-each-ref refs/heads` as `name sha` lines. */
export function branches(repo: ProjectRepo): string[] {
  return repo.run('for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads').split('\n').filter(Boolean);
}

/** `subject` of every commit in `range`, oldest first. */
export function subjects(repo: ProjectRepo, range: string): string[] {
  const log = repo.run('log', '--reverse', '--format=%s', range);
  return log === '' ? [] : log.split('\n');
}

/** The directory of a run's artifacts and reports. */
export function runDirectory(repoDir: string, runId: string): string {
  return join(repoDir, '.ratchet', 'runs', runId);
}

/** The backup directory of a run: `$RATCHET_HOME/backups/<repo name>/<run-id>`. */
export function backupDirectory(repo: ProjectRepo, repoName: string, runId: string): string {
  return join(repo.home, 'backups', repoName, runId);
}

export function isNonEmptyFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile() && statSync(path).size > 0;
}

/**
 * Renders `file` in headless Chromium and returns the DOM it built. Fails loudly when chromium
 * is not runnable: the tests that call it skip first where it is missing (`toolchain('chromium')`).
 */
export async function renderInChromium(file: string): Promise<string> {
  const probe = await execa('chromium', ['--version'], { reject: false, env: cliEnv({}), extendEnv: false });
  if (probe.exitCode !== 0) {
    throw new Error(
      `chromium is required to render the HTML report and is not runnable here (${probe.stderr || probe.message}). Install it: apt-get install -y chromium`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), 'ratchet-chromium-'));
  try {
    const result = await execa(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        '--dump-dom',
        `file://${file}`,
      ],
      { reject: false, timeout: 60_000, env: cliEnv({ HOME: profile }), extendEnv: false },
    );
    if (result.exitCode !== 0 || result.stdout.trim() === '') {
      throw new Error(
        `chromium could not render ${file} (exit ${String(result.exitCode)}): ${result.stderr.slice(-2000)}`,
      );
    }
    return result.stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
