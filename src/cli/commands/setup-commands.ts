import { existsSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { stripVTControlCharacters } from 'node:util';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { CliSetup } from './cli-setup.js';
import pc from 'picocolors';
import { packageRoot } from '../../config/prompts.js';
import { configPath, renderDefaultConfig } from '../../config/write-default.js';
import { RatchetError, isRatchetError, toRatchetError } from '../../core/errors.js';
import { countChanges, describeChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { hardenedGit } from '../../git/hardened-git.js';
import { RATCHET_EXCLUDES, requireWritableHome } from '../../engine/worktree-setup.js';
import { createProcessRunner, runCommand } from '../../process/runner.js';
import { checkClaudeCode } from '../../agent/claude-code-runtime.js';
import { probeSandbox } from '../../engine/sandbox-probe.js';
import { requireSandbox, sandboxUnavailable } from '../../engine/tool-sandbox.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { TestRunResult } from '../../core/verification.js';
import { ledgerPath } from '../../engine/run-paths.js';
import {
  describeCheckCommand,
  detectCheckCommands,
  detectTestCommand,
  missingExecutable,
  type DetectedTestCommand,
} from '../../verify/detect.js';
import { runCheck } from '../../verify/checks.js';
import { collectionSubject } from '../../verify/gates.js';
import { runTests } from '../../verify/run-tests.js';
import { createCliOutput, openRepoLedger, repositoryRoot } from '../context.js';
import { doctorConfig } from './doctor-config.js';
import { EXIT } from '../exit-codes.js';
import { endpointChecks, type EndpointCheck as Check } from '../../llm/endpoint-checks.js';
import { configuredModels } from '../../agent/models/run-models.js';
import { describeFailingTest, failedTests } from '../../verify/failing-tests.js';
import { withScratchCheckout, type ScratchCheckout } from '../../engine/scratch-worktree.js';

const KEY_VARS: Record<string, string | undefined> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };

export function registerSetupCommands(program: Command, cli: CliSetup): void {
  const { setExit } = cli;
  program
    .command('init')
    .description(
      'Write .ratchet/config.toml for this repository (detects the test command) and keep .ratchet/ out of git',
    )
    .option('--force', 'overwrite an existing .ratchet/config.toml (an existing prompts.toml is kept)')
    .option('--prompts', 'also copy the default prompts to .ratchet/prompts.toml to customise them')
    .action(async (flags: { force?: boolean; prompts?: boolean }, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const file = configPath(repoRoot);
      const prompts = join(repoRoot, '.ratchet', 'prompts.toml');
      if (existsSync(file) && !flags.force) {
        // `init --prompts` on a configured repository adds the prompts and keeps the config.
        if (flags.prompts && !existsSync(prompts)) {
          await copyFile(join(packageRoot(), 'prompts', 'prompts.toml'), prompts);
          if (output.json)
            output.out(
              JSON.stringify({ config: null, testCommand: null, lintCommand: null, typecheckCommand: null, prompts }),
            );
          else output.out(`Wrote ${prompts} (edit it to change what the agents are told); ${file} is kept as it is.`);
          return;
        }
        if (flags.prompts) {
          throw new RatchetError(
            'usage',
            `${prompts} already exists (your prompts); init --prompts does not overwrite it.`,
            {
              hint: `To start again from the default prompts, move it aside (mv ${prompts} ${prompts.replace(/\.toml$/, '.old.toml')}) and run ratchet init --prompts again; ${file} is kept.`,
            },
          );
        }
        throw new RatchetError('usage', `${file} already exists; pass --force to overwrite it.`, {
          hint: 'ratchet init --force rewrites it with the defaults.',
        });
      }
      let testCommand: string | undefined;
      let detail: string;
      try {
        const detected = await detectTestCommand(repoRoot);
        testCommand = detected.command;
        detail = `detected test command: ${detected.command} (from ${detected.marker})`;
      } catch (error) {
        const failure = toRatchetError(error);
        detail = `no test command detected (${failure.message}). ${failure.hint ?? 'Set [test] command = "..." in the file.'}`;
      }
      // Lint and typecheck run in VERIFY: the project's own, when it has them.
      const checks = await detectCheckCommands(repoRoot);
      const checkLines = (['lint', 'typecheck'] as const).map((kind) => describeCheckCommand(kind, checks));
      await mkdir(dirname(file), { recursive: true });
      await writeFile(
        file,
        renderDefaultConfig({
          ...(testCommand ? { testCommand } : {}),
          ...(checks.lint ? { lintCommand: checks.lint.command } : {}),
          ...(checks.typecheck ? { typecheckCommand: checks.typecheck.command } : {}),
        }),
      );
      await new Git(repoRoot).addInfoExclude(RATCHET_EXCLUDES);
      // --force is about config.toml: prompts the user edited are theirs (move them aside to reset).
      const keptPrompts = Boolean(flags.prompts) && existsSync(prompts);
      const wrotePrompts = Boolean(flags.prompts) && !keptPrompts;
      if (wrotePrompts) await copyFile(join(packageRoot(), 'prompts', 'prompts.toml'), prompts);
      if (output.json) {
        output.out(
          JSON.stringify({
            config: file,
            testCommand: testCommand ?? null,
            lintCommand: checks.lint?.command ?? null,
            typecheckCommand: checks.typecheck?.command ?? null,
            prompts: wrotePrompts ? prompts : null,
          }),
        );
        return;
      }
      output.out(`Wrote ${file}`);
      output.out(`  ${detail}`);
      for (const line of checkLines) output.out(`  ${line}`);
      if (wrotePrompts) output.out(`Wrote ${prompts} (edit it to change what the agents are told)`);
      if (keptPrompts)
        output.out(
          `Kept ${prompts} as it is (your prompts); to start again from the defaults, move it aside and run ratchet init --prompts.`,
        );
      output.out(`Next: ${pc.cyan('ratchet doctor')}, then ${pc.cyan('ratchet tdd "<feature>"')}`);
    });

  program
    .command('doctor')
    .description(
      'Check git, the test command and its baseline, the provider, its endpoint and key (by listing its models: no tokens spent); each problem with a fix',
    )
    .option('--no-baseline', 'do not run the test suite')
    .option('--provider <name>', 'check this provider instead of the configured one')
    .option('--model <id>', 'check this model instead of the configured one')
    .option('--base-url <url>', 'check this endpoint instead of the configured one')
    .option('--cassette <file>', 'check this cassette (--provider replay)')
    .action(
      async (
        flags: { baseline: boolean; provider?: string; model?: string; baseUrl?: string; cassette?: string },
        command: Command,
      ) => {
        const output = createCliOutput(command);
        const checks: Check[] = [];
        const major = Number(process.versions.node.split('.')[0]);
        checks.push(
          major >= 22
            ? { name: 'node', status: 'ok', detail: process.versions.node }
            : {
                name: 'node',
                status: 'fail',
                detail: process.versions.node,
                hint: 'Ratchet needs Node >= 22 (24 LTS recommended).',
              },
        );
        const gitInvocation = hardenedGit(['--version']);
        const gitVersion = await runCommand({ ...gitInvocation, shell: false, cwd: process.cwd(), extendEnv: false });
        checks.push(
          gitVersion.exitCode === 0
            ? { name: 'git', status: 'ok', detail: gitVersion.stdout.trim() }
            : { name: 'git', status: 'fail', detail: 'git not found', hint: 'Install git.' },
        );
        let repoRoot: string | undefined;
        try {
          repoRoot = await repositoryRoot(command);
          const repo = new Git(repoRoot);
          const changes = await countChanges(repo);
          checks.push(
            (await repo.revParse('HEAD')) === null
              ? {
                  name: 'repository',
                  status: 'fail',
                  detail: `${repoRoot} has no commits yet`,
                  hint: 'Commit your project first (git add -A && git commit -m "initial"): a run starts from a commit.',
                }
              : { name: 'repository', status: 'ok', detail: repoRoot },
          );
          checks.push(
            changes.changes === 0
              ? { name: 'working tree', status: 'ok', detail: 'clean' }
              : {
                  name: 'working tree',
                  status: 'warn',
                  detail: describeChanges(changes),
                  hint: 'Commit or stash them, or run with --allow-dirty.',
                },
          );
        } catch (error) {
          const failure = toRatchetError(error);
          checks.push({
            name: 'repository',
            status: 'fail',
            detail: failure.message,
            ...(failure.hint ? { hint: failure.hint } : {}),
          });
        }
        if (repoRoot) {
          try {
            const { config, missingModel } = await doctorConfig(repoRoot, flags);
            checks.push({
              name: 'config',
              status: 'ok',
              detail: config.configFile ?? 'defaults (no .ratchet/config.toml; `ratchet init` writes one)',
            });
            if (missingModel) checks.push(missingModel);
            const model = missingModel ? '(no model)' : config.provider.model;
            checks.push(...(await projectCommandChecks(repoRoot, config, flags.baseline)));
            const provider = config.provider.name;
            const keyVar = KEY_VARS[provider];
            if (keyVar) {
              checks.push(
                process.env[keyVar]
                  ? { name: 'provider', status: 'ok', detail: `${provider} ${model}, ${keyVar} is set` }
                  : {
                      name: 'provider',
                      status: 'fail',
                      detail: `${provider}: ${keyVar} is not set`,
                      hint: `export ${keyVar}=... (or choose another --provider)`,
                    },
              );
            }
            if (provider === 'replay') {
              const cassette = config.provider.cassette;
              checks.push(
                cassette && existsSync(cassette)
                  ? { name: 'provider', status: 'ok', detail: `replay ${cassette}` }
                  : {
                      name: 'provider',
                      status: 'fail',
                      detail: cassette ? `replay: the cassette ${cassette} does not exist` : 'replay: no cassette',
                      hint: cassette
                        ? 'Check the path (--cassette is relative to the current directory, [provider] cassette to the repository), or record one with --record FILE.'
                        : 'Pass --cassette FILE or set [provider] cassette.',
                    },
              );
            } else if (provider === 'claude-code') {
              try {
                const { version } = await checkClaudeCode({
                  binary: config.refactor.claude.binary,
                  runner: createProcessRunner(),
                  env: process.env,
                });
                checks.push({
                  name: 'provider',
                  status: 'ok',
                  detail: `claude-code ${version} (${config.refactor.claude.binary}); run \`claude\` then /login if a run reports it is not logged in`,
                });
              } catch (error) {
                const failure = toRatchetError(error);
                checks.push({
                  name: 'provider',
                  status: 'fail',
                  detail: failure.message,
                  ...(failure.hint ? { hint: failure.hint } : {}),
                });
              }
            } else if (!keyVar) {
              checks.push({
                name: 'provider',
                status: 'ok',
                detail: `${provider} ${model}${config.provider.baseUrl ? ` at ${config.provider.baseUrl}` : ''}`,
              });
            }
            if (
              provider === 'anthropic' ||
              provider === 'openai' ||
              provider === 'openai-compatible' ||
              provider === 'ollama'
            ) {
              // Lists the models: proves endpoint and key without spending tokens.
              checks.push(
                ...(await endpointChecks({
                  provider,
                  models: missingModel ? [] : configuredModels(config),
                  baseUrl: config.provider.baseUrl,
                  env: process.env,
                  fetch,
                  timeoutMs: 5_000,
                })),
              );
            }
            checks.push(...(await sandboxChecks(config, provider)));
            try {
              // The check the runs make before they create anything.
              await requireWritableHome(config.home);
              checks.push({ name: 'RATCHET_HOME', status: 'ok', detail: config.home });
            } catch (error) {
              const failure = toRatchetError(error);
              checks.push({
                name: 'RATCHET_HOME',
                status: 'fail',
                detail: failure.message,
                ...(failure.hint ? { hint: failure.hint } : {}),
              });
            }
            // The first run creates the ledger: a check writes nothing into the repository.
            if (existsSync(ledgerPath(repoRoot))) {
              await using ledger = await openRepoLedger(repoRoot);
              checks.push({
                name: 'ledger',
                status: 'ok',
                detail: `${(await ledger.listRuns(1000)).length} runs recorded`,
              });
            } else checks.push({ name: 'ledger', status: 'ok', detail: 'no runs yet (the first run creates it)' });
          } catch (error) {
            const failure = toRatchetError(error);
            checks.push({
              name: isRatchetError(error, 'config') || isRatchetError(error, 'usage') ? 'config' : 'ledger',
              status: 'fail',
              detail: failure.message,
              ...(failure.hint ? { hint: failure.hint } : {}),
            });
          }
        }
        const failed = checks.some((check) => check.status === 'fail');
        if (output.json) output.out(JSON.stringify({ ok: !failed, checks }));
        else {
          for (const check of checks) {
            const mark = check.status === 'ok' ? pc.green('✓') : check.status === 'warn' ? pc.yellow('!') : pc.red('✗');
            output.out(`${mark} ${check.name.padEnd(13)} ${check.detail}`);
            if (check.hint && check.status !== 'ok') output.out(pc.dim(`  ${''.padEnd(13)} fix: ${check.hint}`));
          }
        }
        setExit(failed ? EXIT.usage : EXIT.ok);
      },
    );
}

/**
 * `[bash] sandbox`: what the sandbox enforces here, by trying it (see `probeSandbox`), one check
 * per kind of attempt; a warning when the user opted out, a failure (runs would refuse) when no
 * sandbox can be made.
 */
async function sandboxChecks(config: ResolvedConfig, provider: string): Promise<Check[]> {
  // With claude-code the CLI itself runs in the sandbox: its Bash, Write and Edit are the agent's tools.
  const agent = provider === 'claude-code' ? 'the Claude Code CLI with its tools' : "the agent's Bash";
  if (config.bash.sandbox === 'off')
    return [
      {
        name: 'sandbox',
        status: 'warn',
        detail: `off: ${agent} and the tests run without a sandbox, with your rights`,
        hint: 'Set [bash] sandbox = "auto" (and install bubblewrap) to sandbox them.',
      },
    ];
  const runner = createProcessRunner();
  const problem = await sandboxUnavailable(config, runner);
  if (problem !== undefined) {
    const failure = toRatchetError(await requireSandbox(config, runner).catch((error: unknown) => error));
    return [
      {
        name: 'sandbox',
        status: 'fail',
        detail: `runs will refuse: bubblewrap cannot make a sandbox here (${problem})`,
        ...(failure.hint ? { hint: failure.hint } : {}),
      },
    ];
  }
  return (await probeSandbox(config, runner)).map((probe) => ({
    name: 'sandbox',
    status: probe.ok ? 'ok' : 'fail',
    detail: `${probe.name}: ${probe.detail}`,
    ...(probe.ok
      ? {}
      : { hint: 'The sandbox does not hold here: report it, or run with [bash] sandbox = "off" knowingly.' }),
  }));
}

/**
 * The test, lint and typecheck checks. Unless `--no-baseline`, their commands run as a run's
 * would: in a temporary worktree of HEAD under `$RATCHET_HOME` (removed afterwards), with the
 * dependency folders shared into it, in the run's sandbox (see `withScratchCheckout`), so that
 * what they write (`coverage/`, `dist/`, build caches) and whatever the dependencies run never
 * reach the checkout. A `worktree` line says which commit they checked.
 */
async function projectCommandChecks(repoRoot: string, config: ResolvedConfig, baseline: boolean): Promise<Check[]> {
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
    checks.push(baselineCheck(result, config.test.timeoutMs));
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
  for (const kind of ['lint', 'typecheck'] as const) {
    const command = config[kind].command;
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

function baselineCheck(result: TestRunResult, timeoutMs: number): Check {
  const { passed, failed, total } = result.counts;
  if (result.exitCode === 0 && failed === 0 && result.collectionErrors.length === 0 && !result.timedOut) {
    // RED looks for a new failing test by name: with no names, every RED fails with "no new test".
    if (result.source === 'exit-code' || total === 0)
      return {
        name: 'baseline',
        status: 'warn',
        detail: `${result.command} passed in ${result.durationMs} ms, but Ratchet could not read which tests ran (no per-test results, only the exit code)`,
        hint:
          'TDD needs per-test results: RED must see a new failing test, so every RED would fail with "no new test". ' +
          'Set [test] command in .ratchet/config.toml to a runner Ratchet reads (node --test, vitest, jest, mocha, pytest, python -m unittest, go test, cargo test, mvn test, gradle test), ' +
          'called directly or as the whole `npm test` script (no `&&` chains, wrappers or `make`).',
      };
    return { name: 'baseline', status: 'ok', detail: `${passed} passed in ${result.durationMs} ms` };
  }
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
      hint: `Make every test file import and compile. ${fix}`,
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
    hint: `Run \`${result.command}\` yourself to see why it fails. ${fix}`,
  };
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
  const line =
    lines.find((text) => /\berror\b|exception|not found|no module named|cannot|failed/i.test(text)) ?? lines.at(-1);
  return line === undefined ? undefined : line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
