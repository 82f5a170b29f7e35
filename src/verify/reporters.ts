import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { leadingCd, readTestScript, type Framework } from './detect.js';
import { NODE_TEST_REPORTER_SOURCE } from './node-test-reporter.js';
import { directNpmTest, type DirectNpmScript } from './npm-script.js';

/**
 * How one run gets machine-readable results without changing what the user's command tests.
 *
 * - node:test: `NODE_OPTIONS` adds the `spec` reporter on stdout (what a terminal shows) and
 *   Ratchet's JUnit reporter module (`node-test-reporter.ts`, written into the report directory)
 *   on stderr. Measured on Node 22 and 24: when stdout is not a TTY, `node --test` under
 *   `npm test` prints `spec`, which has no stable per-test shape, so a reporter must be
 *   injected. NODE_OPTIONS reaches `node --test` through npm and any shell script; test-file
 *   subprocesses and ordinary `node` children inherit it harmlessly (the reporter flags act only
 *   in a `--test` parent). The report goes to stderr, not to a file, so no path to it appears in
 *   the environment the code under test sees (NODE_OPTIONS is every test process's): what the
 *   tests print, on stdout or stderr, reaches the parent through its pipes and comes out in the
 *   `spec` output, and a nested `node --test` inside a test writes its report to that test's
 *   stderr, not to ours. JUnit with each test's file is what ids need (they must not change when
 *   a test starts failing, and TAP names the file of failures only); node's own `junit` reporter
 *   writes the file on Node 24 but not on Node 22, hence our module, the same on every version.
 *   When the script sets `--test-reporter` itself, nothing is injected: node requires as many
 *   destinations as reporters and would refuse to start.
 * - pytest: `PYTEST_ADDOPTS` adds `--junitxml` (xunit1, which records each test's file),
 *   `-rA` (a parseable summary should the XML be missing) and `-p no:cacheprovider` (no
 *   `.pytest_cache` written into the worktree).
 * - vitest/jest: reporter flags are appended only when the command (or the `npm test` script
 *   it runs) is a bare `vitest`/`jest` invocation, where appended arguments surely reach it.
 * - mocha: `--reporter tap` (TAP 13, parsed from stdout) is appended to a bare mocha call
 *   whatever reporter it names: mocha takes the last value of a repeated option (checked with
 *   mocha 12), so `mocha --reporter spec` (body-parser's and express's `npm test`) is read too.
 *   Inside a longer shell line it goes in `MOCHA_OPTIONS`, which beats `.mocharc` and the
 *   `mocha` key of package.json but not the command line.
 * - ava: `--tap` appended to a bare ava call.
 * Where none of that can reach the runner, the plan says so (`unreadable`): no gate could judge
 * a run whose per-test results cannot be read, so a run stops before its first model call.
 * - `cd <dir> && <command>` (a monorepo's subproject) is planned as `<command>` run in `<dir>`.
 * - go: `-json` after `go test`; cargo: `--no-fail-fast`, so a failing test binary does not
 *   hide the results of the next ones (otherwise their tests would look removed).
 * - unittest: `-v` after `-m unittest` (after `-m unittest discover` for discovery).
 * - Maven/Gradle: their own XML reports, read after the run (only files newer than its start).
 */
export type ReportSource =
  | { kind: 'junit-file'; file: string }
  /** The last JUnit XML document on the command's stderr. */
  | { kind: 'junit-stderr' }
  | { kind: 'jest-json-file'; file: string }
  | { kind: 'junit-dirs'; patterns: string[] }
  | { kind: 'none' };

export interface ReporterPlan {
  command: string;
  env: Record<string, string>;
  report: ReportSource;
  /** Files the command needs in the report directory (a reporter module), written before it runs. */
  supportFiles?: Array<{ file: string; content: string }>;
  /** Set when the runner's per-test results surely cannot be read: why, and what to configure. */
  unreadable?: { cause: string; hint: string };
  /**
   * For `npm test`: the same run without npm's own process in between (`npm-script.ts`), run
   * instead of `command` (which the result still names), its variables over `env`.
   */
  direct?: DirectNpmScript;
}

export interface PlanReporterInput {
  command: string;
  framework: Framework;
  cwd: string;
  reportDir: string;
  /** The environment the command will see (for NODE_OPTIONS / PYTEST_ADDOPTS to extend). */
  env: Record<string, string | undefined>;
}

const SHELL_SYNTAX = /[;&|<>`$()\n]/;
const NPM_TEST = /^(?:npm)\s+(?:test|t|run\s+test|run-script\s+test)(?=\s|$)/;

/** Decides the command, environment and report files for one test run. */
export async function planReporter(input: PlanReporterInput): Promise<ReporterPlan> {
  const cd = leadingCd(input.command);
  if (cd !== undefined) {
    // `cd frontend && npm test`: plan for `npm test` in `frontend`, then put the `cd` back.
    const inner = await planReporter({
      ...input,
      command: cd.rest,
      cwd: path.resolve(input.cwd, cd.dir),
      reportDir: path.resolve(input.reportDir),
    });
    return {
      ...inner,
      command: inner.command === cd.rest ? input.command : `${cd.prefix}${inner.command}`,
      ...(inner.direct === undefined
        ? {}
        : { direct: { ...inner.direct, command: `${cd.prefix}${inner.direct.command}` } }),
    };
  }
  const plan = await planRunnerReporter(input);
  const direct = await directNpmTest(plan.command, input.cwd, input.env);
  return direct === undefined ? plan : { ...plan, direct };
}

async function planRunnerReporter(input: PlanReporterInput): Promise<ReporterPlan> {
  const { command, framework, reportDir, env } = input;
  const none: ReporterPlan = { command, env: {}, report: { kind: 'none' } };
  const isNpmTest = NPM_TEST.test(command.trim());
  const script = isNpmTest ? await readTestScript(input.cwd) : undefined;
  const effective = script ?? command;

  switch (framework) {
    case 'node-test': {
      const existing = env.NODE_OPTIONS ?? '';
      if (/--test-reporter/.test(effective) || /--test-reporter/.test(existing))
        return { ...none, ...ownNodeReporters(`${existing} ${effective}`) };
      const reporter = path.join(reportDir, 'node-test-reporter.mjs');
      const options = [
        existing,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        // A file URL: node imports the reporter as a module specifier.
        `--test-reporter=${quoteNodeOption(pathToFileURL(reporter).href)}`,
        '--test-reporter-destination=stderr',
      ];
      return {
        command,
        env: { NODE_OPTIONS: options.filter(Boolean).join(' ') },
        report: { kind: 'junit-stderr' },
        supportFiles: [{ file: reporter, content: NODE_TEST_REPORTER_SOURCE }],
      };
    }
    case 'pytest': {
      const file = path.join(reportDir, 'pytest.xml');
      const added = `--junitxml=${shellQuote(file)} -o junit_family=xunit1 -p no:cacheprovider -rA`;
      const existing = env.PYTEST_ADDOPTS ?? '';
      return {
        command,
        env: { PYTEST_ADDOPTS: [existing, added].filter(Boolean).join(' ') },
        report: { kind: 'junit-file', file },
      };
    }
    case 'vitest': {
      const file = path.join(reportDir, 'vitest.json');
      const args = `--reporter=default --reporter=json --outputFile.json=${shellQuote(file)}`;
      const appended = appendArguments(command, effective, isNpmTest, runnerCall('vitest'), args);
      if (appended !== undefined) return { command: appended, env: {}, report: { kind: 'jest-json-file', file } };
      return /--reporter[=\s]+json\b/.test(effective) ? none : { ...none, unreadable: notBare('vitest', effective) };
    }
    case 'jest': {
      const file = path.join(reportDir, 'jest.json');
      const args = `--json --outputFile=${shellQuote(file)}`;
      const appended = appendArguments(command, effective, isNpmTest, runnerCall('jest'), args);
      if (appended !== undefined) return { command: appended, env: {}, report: { kind: 'jest-json-file', file } };
      return /--json\b/.test(effective) ? none : { ...none, unreadable: notBare('jest', effective) };
    }
    case 'mocha': {
      // Mocha runs one reporter, the last one named; TAP keeps every failure readable on the
      // console and is parsed from stdout.
      const args = '--reporter tap --reporter-option tapVersion=13';
      const appended = appendArguments(command, effective, isNpmTest, runnerCall('mocha'), args);
      if (appended !== undefined) return { ...none, command: appended };
      if (/(?:^|\s)(?:--reporter|-R)(?:[\s=]|$)/.test(effective))
        return { ...none, unreadable: notBare('mocha', effective) };
      const existing = env.MOCHA_OPTIONS ?? '';
      return { ...none, env: { MOCHA_OPTIONS: [existing, args].filter(Boolean).join(' ') } };
    }
    case 'ava': {
      const appended = appendArguments(command, effective, isNpmTest, runnerCall('ava'), '--tap');
      if (appended !== undefined) return { ...none, command: appended };
      return /(?:^|\s)--tap\b/.test(effective) ? none : { ...none, unreadable: notBare('ava', effective) };
    }
    case 'go':
      if (/\s-json\b/.test(command) || !/^go\s+test\b/.test(command.trim())) return none;
      // Every `go test` of the command (a nested module's, `go test ./... && (cd arc && go test
      // ./...)`, as init suggests without a go.work), so that each module's tests are read.
      return { ...none, command: command.trim().replace(/(^|&&|;|\()(\s*)go\s+test\b/g, '$1$2go test -json') };
    case 'cargo':
      if (/--no-fail-fast/.test(command) || !/^cargo\s+test\b/.test(command.trim())) return none;
      return { ...none, command: command.trim().replace(/^cargo\s+test\b/, 'cargo test --no-fail-fast') };
    case 'unittest':
      return { ...none, command: unittestVerbose(command) };
    case 'maven':
    case 'gradle':
      return {
        command,
        env: {},
        report: {
          kind: 'junit-dirs',
          patterns: ['**/target/surefire-reports/TEST-*.xml', '**/build/test-results/**/*.xml'],
        },
      };
    default:
      return none;
  }
}

/**
 * A bare call of `runner`: `vitest run`, `npx vitest`, `node_modules/.bin/vitest`, `CI=1 vitest`,
 * `cross-env NODE_ENV=test mocha`.
 */
function runnerCall(runner: string): RegExp {
  return new RegExp(
    `^(?:[A-Za-z_][A-Za-z0-9_]*=\\S*\\s+)*(?:cross-env\\s+(?:[A-Za-z_][A-Za-z0-9_]*=\\S*\\s+)*)?(?:npx\\s+)?(?:\\S*/)?${runner}(?:\\s|$)`,
  );
}

const REPORTER_FLAGS: Record<string, string> = {
  jest: '--json --outputFile=<file>',
  vitest: '--reporter=json --outputFile.json=<file>',
  mocha: '--reporter tap',
  ava: '--tap',
};

/** Why a runner inside a longer shell line cannot be read, and what to configure. */
function notBare(runner: string, script: string): { cause: string; hint: string } {
  return {
    cause: `the test command runs ${runner} inside a shell command line (\`${script.trim()}\`), where Ratchet cannot add the reporter it reads (${REPORTER_FLAGS[runner] ?? 'a machine-readable reporter'}), and ${runner}'s own console output names no test reliably`,
    hint: `Set [test] command = "npx ${runner} ..." in .ratchet/config.toml (the bare ${runner} call of your test script), or make the package.json test script a bare ${runner} call; Ratchet adds its reporter to it.`,
  };
}

/**
 * node:test with reporters chosen by the script: readable when each one writing to the console
 * is TAP or JUnit (parsed from stdout), else not (`spec`, `dot`, a module, a file destination).
 */
function ownNodeReporters(options: string): Pick<ReporterPlan, 'unreadable'> {
  const reporters = [...options.matchAll(/--test-reporter[=\s]+(\S+)/g)].map((match) => match[1] ?? '');
  const destinations = [...options.matchAll(/--test-reporter-destination[=\s]+(\S+)/g)].map((match) => match[1] ?? '');
  const toConsole = reporters.filter((_, index) => ['stdout', undefined].includes(destinations[index]));
  if (toConsole.length > 0 && toConsole.every((reporter) => reporter === 'tap' || reporter === 'junit')) return {};
  return {
    unreadable: {
      cause: `the test command chooses node:test's reporters itself (${reporters.map((reporter) => `--test-reporter=${reporter}`).join(' ')}), so Ratchet cannot add the JUnit report it reads, and none of them prints TAP or JUnit on the console`,
      hint: 'Remove --test-reporter from the test command (Ratchet adds spec for the console and a JUnit report for itself), or use --test-reporter=tap.',
    },
  };
}

/**
 * Appends runner arguments when they are sure to reach the runner: the command is a bare
 * invocation (no shell syntax), or `npm test` whose script is one.
 */
function appendArguments(
  command: string,
  effective: string,
  isNpmTest: boolean,
  runner: RegExp,
  args: string,
): string | undefined {
  const target = effective.trim();
  if (SHELL_SYNTAX.test(target) || !runner.test(target)) return undefined;
  if (!isNpmTest) return `${command.trim()} ${args}`;
  if (SHELL_SYNTAX.test(command)) return undefined;
  return / -- /.test(command) ? `${command.trim()} ${args}` : `${command.trim()} -- ${args}`;
}

/**
 * Adds `-v` where unittest accepts it: after `discover` when the command runs discovery
 * (`-m unittest -v discover` is rejected), else right after `-m unittest`. The command is left
 * alone when it is verbose already or has no `-m unittest` of that shape.
 */
function unittestVerbose(command: string): string {
  if (/\s(?:-v|--verbose)(?=\s|$)/.test(command)) return command;
  const match = /-m\s+unittest(\s+discover)?(?=\s|$)/.exec(command);
  if (match === null) return command;
  const end = match.index + match[0].length;
  return `${command.slice(0, end)} -v${command.slice(end)}`;
}

/** Quotes a word for `/bin/sh` (and for pytest's shlex-split PYTEST_ADDOPTS). */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A value for `NODE_OPTIONS`, double-quoted when it has spaces (node splits the variable on them). */
function quoteNodeOption(value: string): string {
  return /[\s"\\]/.test(value) ? `"${value.replace(/(["\\])/g, '\\$1')}"` : value;
}
