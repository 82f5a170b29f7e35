/**
 * `ratchet doctor`'s checks of the project's own commands: the test command and its baseline, the
 * lint and typecheck commands, each run as a run would run it (see `projectCommandChecks`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { ResolvedConfig } from '../../config/resolved.js';
import { toRatchetError } from '../../core/errors.js';
import type { TestRunResult } from '../../core/verification.js';
import { countChanges, describeChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { withScratchCheckout, type ScratchCheckout } from '../../engine/scratch-worktree.js';
import type { EndpointCheck as Check } from '../../llm/endpoint-checks.js';
import { createProcessRunner } from '../../process/runner.js';
import { runCheck } from '../../verify/checks.js';
import {
  describeCheckCommand,
  detectCheckCommands,
  detectTestCommand,
  missingExecutable,
  type DetectedTestCommand,
} from '../../verify/detect.js';
import { describeFailingTest, failedTests } from '../../verify/failing-tests.js';
import { collectionSubject } from '../../verify/gates.js';
import { runTests } from '../../verify/run-tests.js';
import { untestedGoModulesAt, untestedGoModulesText } from '../../verify/go-modules.js';

/**
 * The test, lint and typecheck checks. Unless `--no-baseline`, their commands run as a run's
 * would: in a temporary worktree of HEAD under `$RATCHET_HOME` (removed afterwards), with the
 * dependency folders shared into it, in the run's sandbox (see `withScratchCheckout`), so that
 * what they write (`coverage/`, `dist/`, build caches) and whatever the dependencies run never
 * reach the checkout. A `worktree` line says which commit they checked.
 */
export async function projectCommandChecks(
  repoRoot: string,
  config: ResolvedConfig,
  baseline: boolean,
): Promise<Check[]> {
  const git = new Git(repoRoot);
  if (!baseline || (await git.revParse('HEAD')) === null)
    return [
      ...(await testCommandChecks(repoRoot, config, null)),
      ...(await verifyCommandChecks(repoRoot, config, null)),
    ];
  const uncommitted = await countChanges(git);
  try {
    return await withScratchCheckout(
      { target: repoRoot, config, runner: createProcessRunner(), env: process.env },
      async (scratch) => [
        {
          name: 'worktree',
          status: 'ok',
          detail: `the commands below ran on HEAD ${(scratch.commit ?? '').slice(0, 8)} in a temporary worktree (removed again), as a run starts from HEAD${uncommitted.changes > 0 ? `, without your ${describeChanges(uncommitted)}` : ''}${scratch.sandboxed ? ', sandboxed' : ''}`,
        },
        ...(await testCommandChecks(repoRoot, config, scratch)),
        ...(await verifyCommandChecks(repoRoot, config, scratch)),
        // A command that swapped a shared dependency folder (it was put back before the next one).
        ...scratch.takeNotices().map((notice): Check => ({ name: 'dependencies', status: 'warn', detail: notice })),
      ],
    );
  } catch (error) {
    const failure = toRatchetError(error);
    return [
      {
        name: 'baseline',
        status: 'fail',
        detail: `could not set up a temporary worktree for the baseline: ${failure.message}`,
        ...(failure.hint ? { hint: failure.hint } : {}),
      },
    ];
  }
}

/**
 * The `test command` check and, given where to run it (see `projectCommandChecks`), the
 * `baseline` check: the command must name a program that is installed (`mvn`, `gradle`,
 * `cargo`, ... or the project's wrapper), and the suite must pass. The baseline's reports go to a
 * temporary directory.
 */
async function testCommandChecks(
  repoRoot: string,
  config: ResolvedConfig,
  baseline: ScratchCheckout | null,
): Promise<Check[]> {
  let detected: DetectedTestCommand;
  try {
    detected = await detectTestCommand(repoRoot, config.test.command);
  } catch (error) {
    const failure = toRatchetError(error);
    return [
      {
        name: 'test command',
        status: 'fail',
        detail: failure.message,
        ...(failure.hint ? { hint: failure.hint } : {}),
      },
    ];
  }
  const described = `${detected.command} (${detected.source === 'config' ? 'from config' : `detected from ${detected.marker}`})`;
  const missing = await missingExecutable(detected.command, repoRoot);
  if (missing !== undefined) {
    const why =
      missing.reason === 'not-executable'
        ? `${missing.executable} is not executable`
        : missing.reason === 'missing-module'
          ? `${missing.executable} cannot import pytest (No module named pytest)`
          : `${missing.executable} is not installed (not on PATH)`;
    return [{ name: 'test command', status: 'fail', detail: `${described}: ${why}`, hint: missing.hint }];
  }
  const checks: Check[] = [{ name: 'test command', status: 'ok', detail: described }];
  const untested = await untestedGoModulesAt(repoRoot, detected.command);
  if (untested.modules.length > 0)
    checks.push({ name: 'go modules', status: 'warn', ...untestedGoModulesText(untested.modules, untested.place) });
  if (baseline === null) return checks;
  try {
    // Its reports go to a temporary directory (runTests' own): doctor writes nothing into the repository.
    const result = await runTests({
      command: detected.command,
      framework: detected.framework,
      cwd: baseline.dir,
      runner: baseline.runner,
      environment: baseline.environment,
      timeoutMs: config.test.timeoutMs,
    });
    // Said with the command as configured, not with the reporter flags Ratchet appended to it.
    checks.push(baselineCheck({ ...result, command: detected.command }, config.test.timeoutMs, repoRoot));
  } catch (error) {
    const failure = toRatchetError(error);
    checks.push({
      name: 'baseline',
      status: 'fail',
      detail: failure.message,
      ...(failure.hint ? { hint: failure.hint } : {}),
    });
  }
  return checks;
}

/**
 * The configured lint and typecheck commands: installed, and (unless `--no-baseline`) passing
 * before any change. VERIFY runs them after every GREEN, so one that fails on the untouched
 * project would stop every cycle at VERIFY.
 */
async function verifyCommandChecks(
  repoRoot: string,
  config: ResolvedConfig,
  baseline: ScratchCheckout | null,
): Promise<Check[]> {
  const checks: Check[] = [];
  // Without a command of its own: the tool the project would use but cannot (clippy for a crate,
  // a configured ruff), and how to add it; `init` proposes it once it is installed.
  const detected = await detectCheckCommands(repoRoot);
  for (const kind of ['lint', 'typecheck'] as const) {
    const command = config[kind].command;
    const missingTool = detected.notInstalled?.[kind];
    if (!command && missingTool !== undefined)
      checks.push({
        name: kind,
        status: 'warn',
        detail: describeCheckCommand(kind, detected),
        hint: `Install ${missingTool.tool} (${missingTool.install}), then set [${kind}] command = "${missingTool.command}" in .ratchet/config.toml.`,
      });
    if (!command) continue;
    const missing = await missingExecutable(command, repoRoot, process.env.PATH, kind);
    if (missing !== undefined) {
      checks.push({
        name: kind,
        status: 'fail',
        detail: `${command}: ${missing.executable} is not installed or not executable`,
        hint: missing.hint,
      });
      continue;
    }
    if (baseline === null) {
      checks.push({ name: kind, status: 'ok', detail: `${command} (not run: --no-baseline)` });
      continue;
    }
    const result = await runCheck({
      name: kind,
      command,
      cwd: baseline.dir,
      runner: baseline.runner,
      environment: baseline.environment,
      timeoutMs: config.test.timeoutMs,
    });
    const reason = result.timedOut
      ? `timed out after ${config.test.timeoutMs / 1000} s`
      : `exited ${String(result.exitCode)}`;
    checks.push(
      result.ok
        ? { name: kind, status: 'ok', detail: `${command} passes (${result.durationMs} ms)` }
        : {
            name: kind,
            status: 'fail',
            detail: `${command} ${reason} before any change${result.timedOut ? '' : `: ${reasonLine(result.output) ?? 'no output'}`}`,
            hint: `VERIFY runs it after every GREEN, so every cycle would stop there: make it pass first, or remove [${kind}] command from .ratchet/config.toml.`,
          },
    );
  }
  return checks;
}

function baselineCheck(result: TestRunResult, timeoutMs: number, repoRoot: string): Check {
  const { passed, failed, total } = result.counts;
  // A run accepts a suite in which nothing failed, an empty one too (a new project: pytest exits 5).
  const clean = failed === 0 && result.collectionErrors.length === 0 && !result.timedOut;
  if (clean && result.exitCode === 0 && result.source === 'exit-code')
    // RED looks for a new failing test by name: with no names, every RED fails with "no new test";
    // where the results are unreadable (`problem`), a run does not even start.
    return {
      name: 'baseline',
      status: result.problem === undefined ? 'warn' : 'fail',
      detail: `${result.command} passed in ${result.durationMs} ms, but Ratchet could not read which tests ran (no per-test results, only the exit code)`,
      hint:
        'TDD needs per-test results: RED must see a new failing test, so every RED would fail with "no new test". ' +
        'Set [test] command in .ratchet/config.toml to a runner Ratchet reads (node --test, vitest, jest, mocha, pytest, python -m unittest, go test, cargo test, mvn test, gradle test), ' +
        'called directly or as the whole `npm test` script (no `&&` chains, wrappers or `make`).',
    };
  // What a run's baseline stops on (`requireGreenBaseline`): results no gate can judge. A command
  // that failed without any result read is said below, with the line that says why.
  if (result.problem !== undefined && !result.timedOut && !(result.source === 'exit-code' && result.exitCode !== 0))
    return {
      name: 'baseline',
      status: 'fail',
      detail: `Ratchet cannot use the results of ${result.command}: ${result.problem.message}`,
      hint:
        result.problem.hint ??
        'Set [test] command = "..." in .ratchet/config.toml to a command whose results Ratchet reads.',
    };
  if (clean && result.source !== 'exit-code' && total === 0) {
    const uncollected = /\bpytest\b/.test(result.command) ? uncollectedPythonTests(repoRoot) : [];
    if (uncollected.length > 0)
      return {
        name: 'baseline',
        status: 'warn',
        detail: `pytest collected no tests, but ${uncollected.slice(0, 3).join(', ')} hold${uncollected.length === 1 ? 's' : ''} some: a run would never run them`,
        hint: PYTEST_COLLECTED_NONE,
      };
    return {
      name: 'baseline',
      status: 'ok',
      detail: `no tests yet (${result.command} ran an empty suite in ${result.durationMs} ms): RED writes the first`,
    };
  }
  if (clean && result.exitCode === 0)
    return { name: 'baseline', status: 'ok', detail: `${passed} passed in ${result.durationMs} ms` };
  const fix = 'Every test must pass before Ratchet starts: fix the suite first.';
  if (result.timedOut)
    return {
      name: 'baseline',
      status: 'fail',
      detail: `${result.command} timed out after ${timeoutMs / 1000} s`,
      hint: 'Raise [test] timeout (seconds) in .ratchet/config.toml, or make the suite faster.',
    };
  const failing = failedTests(result);
  if (result.collectionErrors.length > 0) {
    // A file that does not import or compile: it is not a failing test, nothing in it ran.
    const subjects = result.collectionErrors.slice(0, 3).map(collectionSubject);
    const more = result.collectionErrors.length > subjects.length ? ', ...' : '';
    const first = result.collectionErrors[0] ?? '';
    const subject = collectionSubject(first);
    const why = reasonLine(first.startsWith(`${subject}: `) ? first.slice(subject.length + 2) : first) ?? '';
    return {
      name: 'baseline',
      status: 'fail',
      detail: `${result.collectionErrors.length} could not be collected (${subjects.join(', ')}${more})${why === '' ? '' : `: ${why}`}, ${failing.length > 0 ? `${failing.length} failing, ` : ''}${passed} passed, exit ${String(result.exitCode)}`,
      hint:
        uninstalledSrcPackage(why, repoRoot) ??
        unfetchedDependencies(result.output) ??
        `Make every test file import and compile. ${fix}`,
    };
  }
  if (failing.length > 0) {
    const names = failing.slice(0, 3).map(describeFailingTest);
    const more = failing.length > names.length ? ', ...' : '';
    return {
      name: 'baseline',
      status: 'fail',
      detail: `${failing.length} failing (${names.join(', ')}${more}), ${passed} passed, exit ${String(result.exitCode)}`,
      hint: fix,
    };
  }
  // Nothing failed by name: the command itself failed (a build error, a missing plugin or module).
  const reason = reasonLine(result.output);
  return {
    name: 'baseline',
    status: 'fail',
    detail: `${result.command} exited ${String(result.exitCode)} without a failing test${reason ? `: ${reason}` : ''}`,
    hint:
      readOnlyDependencyHint(reason) ??
      unfetchedDependencies(result.output) ??
      (result.exitCode === 5 && /\bno tests ran\b/.test(result.output) ? PYTEST_COLLECTED_NONE : undefined) ??
      `Run \`${result.command}\` yourself to see why it fails. ${fix}`,
  };
}

const PYTEST_COLLECTED_NONE =
  'pytest collects test_*.py and *_test.py files by default. If the tests are elsewhere or unittest-style (a tests.py), set [test] command in .ratchet/config.toml, e.g. "python3 -m unittest", or configure python_files under [tool.pytest.ini_options].';

/**
 * Python files at the top of the project or in its test folders that hold tests (a `def test_`
 * or a `unittest.TestCase`) although pytest's default discovery collected none: a tests.py, say.
 */
function uncollectedPythonTests(repoRoot: string): string[] {
  const found: string[] = [];
  for (const dir of ['', 'test', 'tests']) {
    let names: string[];
    try {
      names = readdirSync(join(repoRoot, dir));
    } catch {
      continue;
    }
    for (const name of names.filter((entry) => entry.endsWith('.py')).sort()) {
      const file = join(repoRoot, dir, name);
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      if (/^\s*def test\w*\(|unittest\.TestCase\b/m.test(text)) found.push(dir === '' ? name : `${dir}/${name}`);
    }
  }
  return found;
}

/**
 * Dependencies the build would download: runs have no network, so cargo and go must find them
 * already fetched in their caches (~/.cargo, the Go module cache), which the sandbox reads.
 */
function unfetchedDependencies(output: string): string | undefined {
  if (
    /you're using offline mode|failed to get `[^`]+` as a dependency|failed to download|[Uu]nable to update registry/.test(
      output,
    )
  )
    return 'cargo could not download the crates the project needs: runs have no network. Run `cargo fetch` in your checkout once; runs read the crates it downloads (~/.cargo).';
  if (
    /module lookup disabled by GOPROXY=off|go: downloading|missing go\.sum entry|dial tcp.*: (?:lookup|connect)/.test(
      output,
    )
  )
    return 'go could not download the modules the project needs: runs have no network. Run `go mod download` in your checkout once; runs read the module cache it fills.';
  return undefined;
}

/**
 * A suite that writes into the installed dependencies fails in the run's sandbox only (and so
 * passes when the user runs it): `node_modules` and `.venv` are shared read-only with every run,
 * so that a model cannot change what the user has installed. vitest's `--typecheck` is the
 * common case (ufo's `npm test`): it writes a tsbuildinfo beside vitest's own files.
 */
function readOnlyDependencyHint(reason: string | undefined): string | undefined {
  if (reason === undefined || !/EROFS|read-only file system/i.test(reason)) return undefined;
  const folder = /(?:^|[/\\])(node_modules|\.venv|venv)[/\\]/.exec(reason)?.[1];
  if (folder === undefined) return undefined;
  const typecheck = /tsbuildinfo/.test(reason)
    ? ' vitest --typecheck does: drop --typecheck from [test] command and type-check in [typecheck] command (npx tsc --noEmit) instead.'
    : '';
  return `The suite writes into ${folder}/, which Ratchet shares read-only with every run (a model must not change your installed dependencies), so it fails only inside a run. Make it write elsewhere.${typecheck}`;
}

/**
 * The hint for a src-layout Python project that is not installed: its tests import its own
 * package (`src/<name>`), which Python finds only through an install or a configured path, so
 * "make every test file import" would send the user hunting in files that are fine.
 */
function uninstalledSrcPackage(why: string, repoRoot: string): string | undefined {
  const name = /No module named '([A-Za-z_][\w]*)/.exec(why)?.[1];
  if (name === undefined) return undefined;
  const src = join(repoRoot, 'src');
  if (!existsSync(join(src, name, '__init__.py')) && !existsSync(join(src, `${name}.py`))) return undefined;
  return (
    `${name} is this project's own package (src/${name}), which Python imports only once the project is installed: ` +
    'python -m venv .venv && .venv/bin/pip install -e . (Ratchet shares .venv read-only with each run, and each run tests its own copy of src); ' +
    'or add pythonpath = ["src"] under [tool.pytest.ini_options] in pyproject.toml.'
  );
}

/**
 * The line of some output that best says why a command failed: the first that reads like an
 * error, else the last one; colours removed, cut to a readable length.
 */
function reasonLine(output: string): string | undefined {
  const lines = output
    .split('\n')
    .map((text) => stripVTControlCharacters(text).trim())
    // npm's banner of the script it runs (`> pkg@1.0.0 lint`, `> eslint .`) says nothing of why.
    .filter((text) => text !== '' && !text.startsWith('> '));
  // A write the sandbox refused says more than the runner's summary of it ("1 unhandled error").
  const line =
    lines.find((text) => /EROFS|read-only file system/i.test(text)) ??
    lines.find((text) => /\berror\b|exception|not found|no module named|cannot|failed/i.test(text)) ??
    lines.at(-1);
  return line === undefined ? undefined : line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
