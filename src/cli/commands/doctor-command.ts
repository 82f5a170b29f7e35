import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import pc from 'picocolors';
import type { ResolvedConfig } from '../../config/resolved.js';
import { isRatchetError, toRatchetError } from '../../core/errors.js';
import { countChanges, describeChanges, namedChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { hardenedGit } from '../../git/hardened-git.js';
import { ledgerPath } from '../../engine/run-paths.js';
import { probeSandbox } from '../../engine/sandbox-probe.js';
import { requireSandbox, sandboxUnavailable } from '../../engine/tool-sandbox.js';
import { requireWritableHome } from '../../engine/worktree-setup.js';
import type { EndpointCheck as Check } from '../../llm/endpoint-checks.js';
import { agentCommandsText, providerChecks } from '../../agent/models/provider-checks.js';
import { createProcessRunner, runCommand } from '../../process/runner.js';
import { createCliOutput, openRepoLedger, repositoryRoot } from '../context.js';
import { doctorConfig } from './doctor-config.js';
import { EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import type { CliSetup } from './cli-setup.js';
import { projectCommandChecks } from './doctor-project-checks.js';

interface DoctorFlags {
  baseline: boolean;
  provider?: string;
  model?: string;
  baseUrl?: string;
  cassette?: string;
}

/** `ratchet doctor`: every check a run makes before it starts, each problem with its fix; exit 2 when one fails. */
export function registerDoctorCommand(program: Command, { setExit }: CliSetup): void {
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
    .action(async (flags: DoctorFlags, command: Command) => {
      const output = createCliOutput(command);
      const checks: Check[] = await toolChecks();
      const repository = await repositoryChecks(command);
      checks.push(...repository.checks);
      if (repository.root !== undefined) checks.push(...(await configuredChecks(repository.root, flags)));
      const failed = checks.some((check) => check.status === 'fail');
      printChecks(output, checks, failed);
      setExit(failed ? EXIT.usage : EXIT.ok);
    });
}

/** `node` and `git`. */
async function toolChecks(): Promise<Check[]> {
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
  return checks;
}

/** `repository` and `working tree`; `root` is undefined when there is no repository to check further. */
async function repositoryChecks(command: Command): Promise<{ root: string | undefined; checks: Check[] }> {
  const checks: Check[] = [];
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
            hint: `Commit or stash them (${namedChanges(changes)}), or run with --allow-dirty.`,
          },
    );
  } catch (error) {
    checks.push(failedCheck('repository', error));
  }
  return { root: repoRoot, checks };
}

/** What needs the repository's configuration: its commands, the provider, the sandbox, `$RATCHET_HOME`, the ledger. */
async function configuredChecks(repoRoot: string, flags: DoctorFlags): Promise<Check[]> {
  const checks: Check[] = [];
  try {
    const { config, missingModel } = await doctorConfig(repoRoot, flags);
    checks.push({
      name: 'config',
      status: 'ok',
      detail: config.configFile ?? 'defaults (no .ratchet/config.toml; `ratchet init` writes one)',
    });
    if (missingModel) checks.push(missingModel);
    checks.push(...(await projectCommandChecks(repoRoot, config, flags.baseline)));
    checks.push(
      ...(await providerChecks(
        config,
        { env: process.env, runner: createProcessRunner(), fetch },
        { modelMissing: missingModel !== null },
      )),
    );
    checks.push(...(await sandboxChecks(config)));
    try {
      // The check the runs make before they create anything.
      await requireWritableHome(config.home);
      checks.push({ name: 'RATCHET_HOME', status: 'ok', detail: config.home });
    } catch (error) {
      checks.push(failedCheck('RATCHET_HOME', error));
    }
    // The first run creates the ledger: a check writes nothing into the repository.
    if (existsSync(ledgerPath(repoRoot))) {
      await using ledger = await openRepoLedger(repoRoot);
      checks.push({ name: 'ledger', status: 'ok', detail: `${(await ledger.listRuns(1000)).length} runs recorded` });
    } else checks.push({ name: 'ledger', status: 'ok', detail: 'no runs yet (the first run creates it)' });
  } catch (error) {
    checks.push(
      failedCheck(isRatchetError(error, 'config') || isRatchetError(error, 'usage') ? 'config' : 'ledger', error),
    );
  }
  return checks;
}

/** A failed check saying what `error` says, with its hint. */
function failedCheck(name: string, error: unknown): Check {
  const failure = toRatchetError(error);
  return { name, status: 'fail', detail: failure.message, ...(failure.hint ? { hint: failure.hint } : {}) };
}

function printChecks(output: Output, checks: readonly Check[], failed: boolean): void {
  if (output.json) {
    output.out(JSON.stringify({ ok: !failed, checks }));
    return;
  }
  for (const check of checks) {
    const mark = check.status === 'ok' ? pc.green('✓') : check.status === 'warn' ? pc.yellow('!') : pc.red('✗');
    output.out(`${mark} ${check.name.padEnd(13)} ${check.detail}`);
    if (check.hint && check.status !== 'ok') output.out(pc.dim(`  ${''.padEnd(13)} fix: ${check.hint}`));
  }
}

/**
 * `[bash] sandbox`: what the sandbox enforces here, by trying it (see `probeSandbox`), one check
 * per kind of attempt; a warning when the user opted out, a failure (runs would refuse) when no
 * sandbox can be made.
 */
async function sandboxChecks(config: ResolvedConfig): Promise<Check[]> {
  const agent = agentCommandsText(config.provider.name);
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
