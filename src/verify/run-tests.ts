import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { glob } from 'tinyglobby';
import { RatchetError } from '../core/errors.js';
import type { ResultProblem, ResultSource, TestCaseResult, TestRunResult } from '../core/verification.js';
import { commandEnvironment, withEnvironment } from '../process/env.js';
import type { ProcessRunner } from '../process/types.js';
import { cargoDeclaredTests } from './cargo-declared-tests.js';
import { cargoScopes } from './cargo-workspace.js';
import { leadingCd, type Framework } from './detect.js';
import { cargoTargets, parseCargoText, type CargoScope } from './parsers/cargo-text.js';
import { relativeFile, shortMessage, type ParsedTestOutput } from './parsers/classify.js';
import { parseGoJson } from './parsers/go-json.js';
import { extractJestJson, jestFoundNoTests, parseJestJson } from './parsers/jest-json.js';
import { looksLikeJunitXml, parseJunitXml } from './parsers/junit-xml.js';
import { looksLikePytest, parsePytestText } from './parsers/pytest-text.js';
import { looksLikeTap, parseTap } from './parsers/tap.js';
import { looksLikeUnittest, parseUnittestText } from './parsers/unittest-text.js';
import { planReporter, type ReportSource } from './reporters.js';
import { checkResultIntegrity, type ReportState } from './result-integrity.js';

export interface RunTestsOptions {
  command: string;
  framework: Framework;
  cwd: string;
  runner: ProcessRunner;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * A directory Ratchet owns (outside the worktree's tracked files) for report files; default: a
   * temporary directory of this run only, removed afterwards.
   */
  reportDir?: string;
  /**
   * The environment the command starts from (see `commandEnvironment`: an allowlist, nothing
   * inherited); default: the allowlisted variables of Ratchet's own environment.
   */
  environment?: Readonly<Record<string, string>>;
  /** Extra environment for the command, over `environment` (`undefined` removes a variable). */
  env?: Record<string, string | undefined>;
  /** Cap of the output kept in the result (the tail is kept); default 256 KiB. */
  maxOutputChars?: number;
}

/** Output read for parsing; larger than what is kept, since `go test -json` is verbose. */
const CAPTURE_BYTES = 32 * 1024 * 1024;
const DEFAULT_KEPT_CHARS = 256 * 1024;

interface Collected extends ParsedTestOutput {
  source: ResultSource;
  readable?: string;
}

/**
 * Runs the project's test command once and returns per-test results. The results come from a
 * machine-readable report injected for the framework (see `reporters.ts`), else from parsing
 * the console output, else from the exit code alone (`source: 'exit-code'`, no tests).
 * A timeout kills the command's process group and adds a failing pseudo-test of kind
 * 'timeout'. Throws `interrupted` when `signal` fires, `config` when the command is not found.
 */
export async function runTests(options: RunTestsOptions): Promise<TestRunResult> {
  if (options.reportDir !== undefined) return runTestsReportingTo(options, options.reportDir);
  // Where nothing else the runner runs can write (a sandboxed runner's scratch directory): only
  // this one command gets it, writable.
  const reportDir = await mkdtemp(join(options.runner.scratchDir ?? tmpdir(), 'ratchet-report-'));
  try {
    return await runTestsReportingTo(options, reportDir);
  } finally {
    await rm(reportDir, { recursive: true, force: true });
  }
}

async function runTestsReportingTo(options: RunTestsOptions, reportDir: string): Promise<TestRunResult> {
  const { command, framework, cwd, runner, timeoutMs, signal } = options;
  await mkdir(reportDir, { recursive: true });
  const baseEnv = withEnvironment(options.environment ?? commandEnvironment(process.env), options.env);
  const plan = await planReporter({ command, framework, cwd, reportDir, env: baseEnv });
  if (plan.report.kind === 'junit-file' || plan.report.kind === 'jest-json-file')
    await rm(plan.report.file, { force: true });
  for (const support of plan.supportFiles ?? []) {
    // Written afresh, never through what an earlier run left there (`wx` refuses a symlink).
    await rm(support.file, { force: true });
    await writeFile(support.file, support.content, { flag: 'wx' });
  }

  const startedAt = Date.now();
  const run = await runner.run({
    command: plan.direct?.command ?? plan.command,
    cwd,
    // Only the allowlisted environment: no key or token of Ratchet's reaches the tests.
    env: withEnvironment(baseEnv, { ...plan.env, ...plan.direct?.env }),
    extendEnv: false,
    timeoutMs,
    maxOutputBytes: CAPTURE_BYTES,
    writablePaths: [reportDir],
    ...(signal === undefined ? {} : { signal }),
  });
  if (run.aborted || signal?.aborted === true) {
    throw new RatchetError('interrupted', 'Interrupted while running the tests', { cause: signal?.reason });
  }
  if (run.exitCode === 127 && /(?:command )?not found/i.test(run.output)) {
    const program = programNotFound(run.output);
    // `npm test` runs, but the runner its script names (jest, vitest, ...) was never installed.
    const dir = resolve(cwd, leadingCd(command)?.dir ?? '.');
    const uninstalled =
      program !== undefined && existsSync(join(dir, 'package.json')) && !existsSync(join(dir, 'node_modules'));
    throw new RatchetError(
      'config',
      `Test command not found: ${plan.command}${program === undefined ? '' : ` (${program}: not found)`}`,
      {
        hint: uninstalled
          ? `Install the project's dependencies (${installCommand(dir)}), or set [test] command = "..." in .ratchet/config.toml`
          : `Install ${program ?? 'the test runner'} or set [test] command = "..." in .ratchet/config.toml`,
        details: { output: run.output.slice(-2000), ...(program === undefined ? {} : { program }) },
      },
    );
  }

  const cargo =
    framework === 'cargo'
      ? await cargoScopes(resolve(cwd, leadingCd(command)?.dir ?? '.'), cargoTargets(run.output))
      : undefined;
  const report = await fromReport(plan.report, cwd, run, startedAt);
  const collected =
    report.collected ??
    fromOutput(framework, run.stdout, run.output, { exitCode: run.exitCode, cwd, ...(cargo ? { cargo } : {}) });
  // Colours (Maven colours even a pipe) would end up in gate feedback and subjects.
  const tests = collected.tests.map((test) =>
    test.message === undefined ? test : { ...test, message: stripVTControlCharacters(test.message) },
  );
  if (run.timedOut) tests.push(timeoutCase(timeoutMs));
  const keep = options.maxOutputChars ?? DEFAULT_KEPT_CHARS;
  const output = collected.readable ?? run.output;
  // A cargo run that reads as an empty suite is checked against the tests its sources declare.
  const declaredTests =
    framework === 'cargo' && collected.emptySuite === true
      ? await cargoDeclaredTests(resolve(cwd, leadingCd(command)?.dir ?? '.'))
      : [];
  const problem = checkResultIntegrity({
    framework,
    command,
    reportKind: reportKindOf(plan.report),
    reportState: report.state,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    stdout: run.stdout,
    output: run.output,
    tests,
    collectionErrors: collected.collectionErrors,
    source: collected.source,
    emptySuite: collected.emptySuite === true,
    declaredTests,
  });
  return {
    command: plan.command,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    output: output.length > keep ? `[... output truncated ...]\n${output.slice(-keep)}` : output,
    tests,
    collectionErrors: collected.collectionErrors.map((error) => stripVTControlCharacters(error)),
    source: collected.source,
    counts: countTests(tests),
    ...(problem === undefined ? {} : { problem: withPlanHint(problem, plan.unreadable) }),
  };
}

/** The reporter plan knows best why results were unreadable: its cause and hint win. */
function withPlanHint(problem: ResultProblem, planned: { cause: string; hint: string } | undefined): ResultProblem {
  if (problem.kind !== 'unreadable' || planned === undefined) return problem;
  return { kind: 'unreadable', message: `${planned.cause}.`, hint: planned.hint };
}

function reportKindOf(report: ReportSource): 'junit' | 'jest-json' | 'junit-dirs' | 'none' {
  switch (report.kind) {
    case 'junit-file':
    case 'junit-stderr':
      return 'junit';
    case 'jest-json-file':
      return 'jest-json';
    case 'junit-dirs':
      return 'junit-dirs';
    case 'none':
      return 'none';
  }
}

/**
 * Refuses, before anything runs, a test command whose per-test results surely cannot be read
 * (see `ReporterPlan.unreadable`): no gate could judge a model's work on it.
 */
export async function requireReadableResults(options: {
  command: string;
  framework: Framework;
  cwd: string;
}): Promise<void> {
  const plan = await planReporter({ ...options, reportDir: tmpdir(), env: process.env });
  if (plan.unreadable === undefined) return;
  throw new RatchetError(
    'config',
    `Ratchet cannot read per-test results from \`${options.command}\`: ${plan.unreadable.cause}.`,
    {
      hint: plan.unreadable.hint,
      details: { reason: 'results-unreadable', framework: options.framework },
    },
  );
}

/** The program a shell said it could not find (`sh: 1: jest: not found`, `zsh: command not found: jest`). */
function programNotFound(output: string): string | undefined {
  for (const line of output.split('\n')) {
    const found = /:\s*([^\s:]+): (?:command )?not found\s*$/.exec(line) ?? /command not found: (\S+)/.exec(line);
    if (found?.[1] !== undefined) return found[1];
  }
  return undefined;
}

/** Counts tests by status. */
export function countTests(tests: TestCaseResult[]): TestRunResult['counts'] {
  const counts = { passed: 0, failed: 0, skipped: 0, total: tests.length };
  for (const test of tests) counts[test.status] += 1;
  return counts;
}

async function fromReport(
  report: ReportSource,
  cwd: string,
  run: { output: string; stdout: string; stderr: string },
  startedAt: number,
): Promise<{ collected: Collected | undefined; state: ReportState }> {
  const { output } = run;
  const read = (
    collected: Collected | undefined,
    text: string | undefined,
  ): { collected: Collected | undefined; state: ReportState } => ({
    collected,
    state: text === undefined ? 'missing' : collected === undefined ? 'unparseable' : 'read',
  });
  switch (report.kind) {
    case 'junit-file': {
      const xml = await readIfPresent(report.file);
      return read(xml === undefined ? undefined : attempt(() => parseJunitXml(xml, { cwd, output }), 'junit-xml'), xml);
    }
    case 'jest-json-file': {
      const json = await readIfPresent(report.file);
      return read(
        json === undefined ? undefined : attempt(() => parseJestJson(JSON.parse(json), { cwd }), 'jest-json'),
        json,
      );
    }
    case 'junit-stderr': {
      const xml = lastJunitDocument(run.stderr);
      if (xml === undefined) return read(undefined, undefined);
      // What the user and the model read: the console output without the report's XML.
      const rest = `${run.stderr.slice(0, xml.start)}${run.stderr.slice(xml.end)}`.trim();
      const readable = output.includes(xml.text)
        ? output.replace(xml.text, '')
        : rest === ''
          ? run.stdout
          : `${run.stdout}\n${rest}`;
      const parsed = attempt(() => parseJunitXml(xml.text, { cwd, output: readable }), 'junit-xml');
      return read(parsed && { ...parsed, readable }, xml.text);
    }
    case 'junit-dirs': {
      const collected = await fromReportDirs(report.patterns, cwd, output, startedAt);
      return { collected, state: collected === undefined ? 'missing' : 'read' };
    }
    case 'none':
      return { collected: undefined, state: 'not-asked' };
  }
}

/** The last JUnit XML document of `text` (what else the command wrote to stderr is left around it). */
function lastJunitDocument(text: string): { text: string; start: number; end: number } | undefined {
  const closing = '</testsuites>';
  const end = text.lastIndexOf(closing);
  if (end < 0) return undefined;
  const declaration = text.lastIndexOf('<?xml', end);
  const start = declaration >= 0 ? declaration : text.lastIndexOf('<testsuites', end);
  if (start < 0) return undefined;
  return { text: text.slice(start, end + closing.length), start, end: end + closing.length };
}

async function fromReportDirs(
  patterns: string[],
  cwd: string,
  output: string,
  startedAt: number,
): Promise<Collected | undefined> {
  const files = await glob(patterns, { cwd, absolute: true, ignore: ['**/node_modules/**', '**/.git/**'] });
  const merged: ParsedTestOutput = { tests: [], collectionErrors: [] };
  // Report files from earlier runs stay on disk; file systems may round mtimes down to 1 s.
  for (const file of files.sort()) {
    if ((await stat(file)).mtimeMs < startedAt - 1000) continue;
    const xml = await readIfPresent(file);
    const parsed = xml === undefined ? undefined : attempt(() => parseJunitXml(xml, { cwd, output }), 'junit-xml');
    if (parsed === undefined) continue;
    merged.tests.push(...parsed.tests);
    merged.collectionErrors.push(...parsed.collectionErrors);
  }
  if (merged.tests.length === 0 && merged.collectionErrors.length === 0) return undefined;
  return { ...merged, source: 'junit-xml' };
}

/** How a runner exits when it ran no test: 0, but jest's 1 without `--passWithNoTests`. */
const EMPTY_SUITE_EXIT: Partial<Record<Framework, number>> = { go: 0, cargo: 0, jest: 1 };

const noResult: ParsedTestOutput = { tests: [], collectionErrors: [] };

interface OutputContext {
  exitCode: number | null;
  cwd: string;
  /** The scopes of a Cargo workspace's test targets (see `cargoScopes`). */
  cargo?: CargoScope[];
}

/**
 * Parses the console output with the framework's parser, then TAP, then gives up. A parser's
 * result counts when it holds a test or a collection error, or when it is a readable empty suite
 * (`ParsedTestOutput.emptySuite`) of a command that exited as that runner does when it ran none.
 */
function fromOutput(framework: Framework, stdout: string, output: string, context: OutputContext): Collected {
  const candidates: (() => Collected | undefined)[] = [];
  switch (framework) {
    case 'go':
      candidates.push(() => {
        const parsed = parseGoJson(output);
        return { ...parsed, source: 'go-json' };
      });
      break;
    case 'cargo':
      candidates.push(() =>
        attempt(() => parseCargoText(output, context.cargo ? { scopes: context.cargo } : {}), 'cargo'),
      );
      break;
    case 'pytest':
      if (looksLikePytest(output)) candidates.push(() => attempt(() => parsePytestText(output), 'pytest'));
      break;
    case 'unittest':
      if (looksLikeUnittest(output)) candidates.push(() => attempt(() => parseUnittestText(output), 'unittest'));
      break;
    case 'jest':
    case 'vitest':
      candidates.push(() => attempt(() => parseJestJson(extractJestJson(stdout)), 'jest-json'));
      // Standing in for the report jest did not write.
      if (framework === 'jest') candidates.push(() => attempt(() => jestFoundNoTests(output) ?? noResult, 'jest-json'));
      break;
    default:
      break;
  }
  if (looksLikeJunitXml(stdout))
    candidates.push(() => attempt(() => parseJunitXml(stdout.slice(stdout.indexOf('<'))), 'junit-xml'));
  if (looksLikeTap(stdout)) candidates.push(() => attempt(() => parseTap(stdout), 'tap'));
  for (const candidate of candidates) {
    const collected = candidate();
    if (collected === undefined) continue;
    if (collected.tests.length > 0 || collected.collectionErrors.length > 0) return collected;
    // No test, said by the runner in a form the code under test cannot print, and a clean exit:
    // results that read "nothing ran" (a baseline before the first test), never "passed".
    if (collected.emptySuite === true && context.exitCode === EMPTY_SUITE_EXIT[framework]) return collected;
  }
  return { tests: [], collectionErrors: buildFailures(framework, output, context), source: 'exit-code' };
}

/**
 * Compile errors that kept the tests from running, read from the console when no test result
 * was: Maven/Gradle write no report when compiling the tests failed, and a TypeScript build
 * step (`tsc -p . && node --test dist/`) stops before the runner starts.
 */
function buildFailures(framework: Framework, output: string, context: OutputContext): string[] {
  const lines = stripVTControlCharacters(output).split('\n');
  if (framework === 'maven' || framework === 'gradle') {
    const index = lines.findIndex((line) => /COMPILATION ERROR|Compilation failed|compileTest\w* FAILED/.test(line));
    if (index >= 0) {
      const block = lines.slice(index, index + 12).join('\n');
      const source = /((?:file:\/\/)?[^\s:[\]]+\.(?:java|kt|groovy|scala))(?::\[?\d+|:\s)/.exec(block)?.[1];
      return [source === undefined ? block : `${relativeFile(source, context.cwd)}: ${block}`];
    }
  }
  if (context.exitCode === 0) return [];
  return typescriptErrors(lines, context.cwd);
}

/**
 * `tsc` errors, one collection error per file: `src/a.test.ts(2,10): error TS2305: ...`
 * (`src/a.test.ts:2:10 - error TS2305: ...` with `--pretty`), or `tsc: error TS5058: ...` for
 * an error that names no file.
 */
function typescriptErrors(lines: string[], cwd: string): string[] {
  const byFile = new Map<string, string[]>();
  for (const line of lines) {
    const match = /^\s*(?:(.+?)(?:\((\d+),(\d+)\)|:(\d+):(\d+))\s*[:-]\s*)?(error TS\d+:.*)$/.exec(line.trimEnd());
    if (match?.[6] === undefined) continue;
    const file = match[1] === undefined ? 'tsc' : relativeFile(match[1], cwd);
    const where = match[2] ?? match[4];
    const text = where === undefined ? match[6] : `${where}:${match[3] ?? match[5] ?? ''} ${match[6]}`;
    const list = byFile.get(file) ?? [];
    list.push(text);
    byFile.set(file, list);
  }
  return [...byFile].map(([file, errors]) => shortMessage(`${file}: ${errors.join('\n')}`));
}

function attempt(parse: () => ParsedTestOutput, source: ResultSource): Collected | undefined {
  try {
    return { ...parse(), source };
  } catch {
    // Malformed or truncated report: the caller falls back to the next source.
    return undefined;
  }
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trim() === '' ? undefined : text;
  } catch {
    return undefined;
  }
}

function timeoutCase(timeoutMs: number): TestCaseResult {
  return {
    id: '(run)::timeout',
    name: 'test run timed out',
    file: null,
    status: 'failed',
    failureKind: 'timeout',
    message: `The test command did not finish within ${timeoutMs} ms and was killed with its process group.`,
  };
}

/** How the project installs its dependencies, by its lock file (npm's when it has none). */
function installCommand(dir: string): string {
  if (existsSync(join(dir, 'pnpm-lock.yaml'))) return 'pnpm install';
  if (existsSync(join(dir, 'yarn.lock'))) return 'yarn install';
  if (existsSync(join(dir, 'bun.lock')) || existsSync(join(dir, 'bun.lockb'))) return 'bun install';
  return 'npm install';
}
