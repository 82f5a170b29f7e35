/**
 * Schema of `.ratchet/config.toml` — the written type, with snake_case keys as they appear in the
 * file. Every key carries a description and (where it has one) a default, so the same schema
 * documents the file, fills the defaults and rejects typos: every table is strict, and an unknown
 * key is an error that names it. The camelCase type the rest of Ratchet reads is `ResolvedConfig`
 * (see `resolved.ts`); `load.ts` layers env and flags over this and applies the cross-field rules.
 */
import { TeamConfigSchema } from './team-schema.js';
import { z } from 'zod';
import { TEST_FILE_GLOBS } from '../core/test-file-globs.js';

/** Providers Ratchet can drive (DESIGN.md, Contracts). */
const PROVIDER_NAMES = ['anthropic', 'openai', 'openai-compatible', 'ollama', 'claude-code', 'replay'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** When the TDD loop runs REFACTOR: every cycle, only when the static checker asks, or never. */
const REFACTOR_MODES = ['always', 'when-needed', 'never'] as const;
export type RefactorMode = (typeof REFACTOR_MODES)[number];

/** Agent stages as spelled in `[stages.<name>]` tables. */
export const STAGE_KEYS = ['plan', 'red', 'red_fix', 'green', 'fix', 'refactor'] as const;
export type StageKey = (typeof STAGE_KEYS)[number];

/** The TDD seed's `TDD_MODEL` default. */
export const DEFAULT_MODEL = 'claude-opus-4-5-20251101';

const positiveInt = () => z.number().int().positive();
const nonNegativeInt = () => z.number().int().nonnegative();
const command = () => z.string().min(1);

export const ProviderNameSchema = z.enum(PROVIDER_NAMES);
export const RefactorModeSchema = z.enum(REFACTOR_MODES);

const ProviderSectionSchema = z
  .strictObject({
    name: ProviderNameSchema.default('anthropic').describe('Model provider (or agent runtime) to use.'),
    model: z
      .string()
      .min(1)
      .default(DEFAULT_MODEL)
      .describe('Model id, sent exactly as written (never swapped for another). Env: TDD_MODEL.'),
    base_url: z
      .url()
      .optional()
      .describe(
        'Provider endpoint: required for openai-compatible, with its /v1 (e.g. vLLM http://127.0.0.1:8000/v1); for anthropic without /v1, as ANTHROPIC_BASE_URL.',
      ),
    cassette: z.string().min(1).optional().describe('NDJSON cassette for the replay provider, relative to the repo.'),
    max_retries: nonNegativeInt()
      .default(3)
      .describe('Retries of a failed model call (rate limit, overload, network).'),
    stream: z.boolean().default(true).describe('Stream model output (progress display).'),
    max_output_tokens: positiveInt()
      .optional()
      .describe(
        "Output tokens per model call (max_tokens); when set, sent as given. Default: 16000, or the model's own lower limit when Ratchet knows it (claude-3-5-haiku 8192, claude-3-opus and gpt-4-turbo 4096). Set it lower for a local model with a small context. Not used by claude-code.",
      ),
  })
  .describe('Which model answers, and how it is called.');

const TestSectionSchema = z
  .strictObject({
    command: command().optional().describe('Test command; auto-detected from the project when absent.'),
    timeout: positiveInt().default(600).describe('Test command timeout, in seconds.'),
    patterns: z
      .array(z.string().min(1))
      .default([...TEST_FILE_GLOBS])
      .describe('Globs of test files (locked after RED; GREEN, FIX and REFACTOR may not change them).'),
  })
  .describe('How the project runs its tests.');

const LintSectionSchema = z
  .strictObject({
    command: command().optional().describe('Lint command run by VERIFY; skipped when absent.'),
  })
  .describe('Lint gate.');

const TypecheckSectionSchema = z
  .strictObject({
    command: command().optional().describe('Typecheck command run by VERIFY; skipped when absent.'),
  })
  .describe('Typecheck gate.');

const BashSectionSchema = z
  .strictObject({
    timeout: positiveInt().default(120).describe('Timeout of each agent Bash command, in seconds.'),
    sandbox: z
      .enum(['auto', 'required', 'off'])
      .default('auto')
      .describe(
        "Run the agent's commands and the tests, lint and verifiers under bubblewrap (bwrap): writes only to the worktree and a private /tmp, your home and checkout hidden, no network. auto and required: refuse to start a run where the sandbox cannot work (required is the older spelling); off: run them without one, with your rights (also --no-sandbox).",
      ),
    network: z
      .enum(['off', 'on'])
      .default('off')
      .describe("Network inside the sandbox: off (only its own loopback) or on (the host's network)."),
    max_processes: positiveInt()
      .default(4096)
      .describe('Processes (and threads) one sandboxed command may have at once; more ends it (a fork bomb).'),
    max_file_size_mb: positiveInt()
      .default(4096)
      .describe('Largest file a sandboxed command may write, in MiB; writing past it ends the writer.'),
    max_memory_mb: positiveInt()
      .optional()
      .describe(
        "Memory of one sandboxed command, in MiB (each process's data size, and the resident memory of all its processes together); default three quarters of the machine's memory, between 2048 and 16384.",
      ),
    min_free_disk_mb: nonNegativeInt()
      .default(1024)
      .describe(
        'A sandboxed command is stopped when free space on the disk of the worktree or of its temporary directory falls below this many MiB (0: never).',
      ),
    env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name, such as DATABASE_URL'))
      .default([])
      .describe(
        "Environment variables passed to the commands Ratchet runs (the agent's Bash, tests, lint, typecheck, verifiers, formatters) besides the default set (PATH, HOME, USER, SHELL, TMPDIR, LANG/LC_*, TZ, TERM, CI and toolchain locations such as GOPATH, CARGO_HOME, JAVA_HOME, VIRTUAL_ENV). Every other variable is withheld, and values that look like secrets are redacted from prompts, the ledger, logs, reports, commits and notes, passed or not.",
      ),
  })
  .describe('The agent Bash tool and the sandbox of every command that runs the code it wrote.');

const TddSectionSchema = z
  .strictObject({
    refactor: RefactorModeSchema.default('always').describe(
      'When REFACTOR runs: every cycle, only when the static checker finds size problems, or never.',
    ),
    max_attempts: positiveInt().default(3).describe('Attempts per stage before the run fails. Env: TDD_MAX_RETRIES.'),
    max_turns: positiveInt().default(40).describe('Model turns per stage attempt (runaway-loop guard).'),
    stage_timeout: positiveInt().default(900).describe('Wall-clock limit of one stage attempt, in seconds.'),
    review_tests: z
      .boolean()
      .default(true)
      .describe(
        'After RED, review the new tests statically (JavaScript, TypeScript, Python): a test with no assertion, an assertion that cannot fail, a mock of the implementation file or a test file that never imports it goes back to RED_FIX.',
      ),
    review_failure_limit: positiveInt()
      .default(3)
      .describe(
        'Circuit breaker of that review: after this many internal failures in a row (a file it cannot parse), it is not run again in the run, which says so.',
      ),
  })
  .describe('The TDD loop.');

const StageOverrideSchema = z
  .strictObject({
    model: z.string().min(1).optional().describe('Model for this stage (default: [provider] model).'),
    timeout: positiveInt().optional().describe('Stage attempt timeout in seconds (default: [tdd] stage_timeout).'),
    max_attempts: positiveInt().optional().describe('Attempts for this stage (default: [tdd] max_attempts).'),
    max_turns: positiveInt().optional().describe('Model turns for this stage (default: [tdd] max_turns).'),
    max_output_tokens: positiveInt()
      .optional()
      .describe('Output tokens per model call for this stage (default: [provider] max_output_tokens).'),
  })
  .describe('Per-stage overrides.');

const StagesSectionSchema = z
  .strictObject({
    plan: StageOverrideSchema.optional(),
    red: StageOverrideSchema.optional(),
    red_fix: StageOverrideSchema.optional(),
    green: StageOverrideSchema.optional(),
    fix: StageOverrideSchema.optional(),
    refactor: StageOverrideSchema.optional(),
  })
  .describe('Per-stage model, timeout, attempts, turns and output tokens: [stages.plan], [stages.red], ...');

const RefactorCheckSectionSchema = z
  .strictObject({
    split_threshold: positiveInt().default(400).describe('Lines above which a file should be split.'),
    hard_limit: positiveInt().default(800).describe('Lines above which a file MUST be split.'),
    max_function_length: positiveInt().default(50).describe('Maximum lines of one function or method.'),
    max_class_methods: positiveInt().default(15).describe('Maximum methods of one class (or type).'),
  })
  .describe(
    'The static size checker: limits for the files a TDD cycle changed; with [tdd] refactor = "when-needed", a file past them makes REFACTOR run.',
  );

const RefactorClaudeSectionSchema = z
  .strictObject({
    binary: command().default('claude').describe('Claude Code executable.'),
    allowed_tools: z.string().default('Read,Edit,Bash,Grep,Glob').describe('Tools approved without asking.'),
    tools: z.string().default('Read,Edit,Bash,Grep,Glob').describe('Tools made available.'),
    max_turns_patcher: positiveInt().default(10).describe('Turn limit of a patch call.'),
    max_turns_planner: positiveInt().default(6).describe('Turn limit of a planning call.'),
  })
  .describe('Claude Code settings of the refactor workflow.');

const RefactorSectionSchema = z
  .strictObject({
    diff_budget_loc: positiveInt().default(300).describe('Lines a single batch may touch.'),
    max_batches: positiveInt().default(200).describe('Batches per run.'),
    retry_per_batch: nonNegativeInt().default(2).describe('Retries of a failed batch.'),
    run_full_verifier_every: positiveInt().default(5).describe('Run the full verifier every N accepted batches.'),
    fast_verifier: z.array(command()).default([]).describe('Commands run after every batch (default: test command).'),
    full_verifier: z
      .array(command())
      .default([])
      .describe('Commands run periodically and at the end (default: test, lint, typecheck).'),
    scope_globs: z
      .array(z.string().min(1))
      .min(1)
      .default(['**'])
      .describe('Globs a batch may change at most: a planned batch can narrow them, never widen them.'),
    scope_excludes: z
      .array(z.string().min(1))
      .default(['**/dist/**', '**/build/**', '**/.venv/**', '**/node_modules/**'])
      .describe('Globs no batch may touch.'),
    allow_public_api_changes: z.boolean().default(false).describe('Accept batches that change the public API.'),
    formatter: z
      .array(command())
      .default([])
      .describe(
        'Formatter commands (e.g. "npx prettier --write ."): when set, the plan starts with a formatting-only batch that runs them.',
      ),
    max_runtime_minutes: z
      .number()
      .positive()
      .optional()
      .describe('Stop before the next batch once the batch loop has run this long (default: no limit).'),
    claude: RefactorClaudeSectionSchema.prefault({}),
  })
  .describe('`ratchet refactor`: whole-repository refactoring in small batches, each verified and committed.');

const BudgetSectionSchema = z
  .strictObject({
    context_window: positiveInt()
      .optional()
      .describe(
        "Tokens of the model's context window. Default: the model's known window; for ollama 4096 (its default num_ctx: set this to the OLLAMA_CONTEXT_LENGTH you serve with); 8192 for a model Ratchet does not know.",
      ),
    reserved_tokens: positiveInt()
      .default(4096)
      .describe(
        "Tokens of the window kept free for the model's reply: a plan or solve pass's prompt gets the rest, and a prompt over it fails before the call.",
      ),
  })
  .describe('Token budget of each plan and solve pass.');

const SolveSectionSchema = z
  .strictObject({
    stages: z
      .array(z.enum(['scope', 'precision']))
      .min(1)
      .default(['scope', 'precision'])
      .describe(
        'Retrieval stages of each pass (also --stages): scope finds candidate files without a model call; precision has the model grade them.',
      ),
    max_retries_per_step: nonNegativeInt()
      .default(1)
      .describe('Retries of a step whose edits do not apply or whose tests fail, each with that failure.'),
    max_full_files: positiveInt()
      .default(3)
      .describe('Files a pass sees whole (the most relevant); the others as signatures.'),
    context: z
      .enum(['pack', 'whole-files'])
      .default('pack')
      .describe(
        'pack: the most relevant files whole and signatures of the rest; whole-files: every candidate file whole, no precision call (the baseline the pack is measured against).',
      ),
  })
  .describe('The plan and solve workflow: planned multi-step changes with retrieval context.');

/** The whole `.ratchet/config.toml`. A missing table means all of its defaults. */
export const ConfigFileSchema = z.strictObject({
  provider: ProviderSectionSchema.prefault({}),
  test: TestSectionSchema.prefault({}),
  lint: LintSectionSchema.prefault({}),
  typecheck: TypecheckSectionSchema.prefault({}),
  bash: BashSectionSchema.prefault({}),
  tdd: TddSectionSchema.prefault({}),
  stages: StagesSectionSchema.prefault({}),
  refactor_check: RefactorCheckSectionSchema.prefault({}),
  refactor: RefactorSectionSchema.prefault({}),
  budget: BudgetSectionSchema.prefault({}),
  solve: SolveSectionSchema.prefault({}),
  team: TeamConfigSchema.optional().describe(
    'The team of `ratchet team`, instead of .team/team.json (one or the other): agents, coach, turns and file access.',
  ),
});

/** The file after defaults (snake_case). */
export type ConfigFile = z.output<typeof ConfigFileSchema>;

/** Every default, as the file type. */
export function defaultConfigFile(): ConfigFile {
  return ConfigFileSchema.parse({});
}
