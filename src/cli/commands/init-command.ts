import { existsSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { packageRoot } from '../../config/prompts.js';
import { configPath, renderDefaultConfig } from '../../config/write-default.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import { RATCHET_EXCLUDES } from '../../engine/worktree-setup.js';
import { describeCheckCommand, detectCheckCommands, detectTestCommand } from '../../verify/detect.js';
import { untestedGoModulesAt, untestedGoModulesText } from '../../verify/go-modules.js';
import { createCliOutput, repositoryRoot } from '../context.js';
import type { Output } from '../output.js';

interface InitFlags {
  force?: boolean;
  prompts?: boolean;
}

/** `ratchet init`: writes `.ratchet/config.toml` (and, asked, `.ratchet/prompts.toml`); keeps `.ratchet/` out of git. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      'Write .ratchet/config.toml for this repository (detects the test command) and keep .ratchet/ out of git',
    )
    .option('--force', 'overwrite an existing .ratchet/config.toml (an existing prompts.toml is kept)')
    .option('--prompts', 'also copy the default prompts to .ratchet/prompts.toml to customise them')
    .action(async (flags: InitFlags, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      const file = configPath(repoRoot);
      const prompts = join(repoRoot, '.ratchet', 'prompts.toml');
      if (existsSync(file) && !flags.force) return initConfigured(flags, output, file, prompts);
      let testCommand: string | undefined;
      let detail: string;
      try {
        const detected = await detectTestCommand(repoRoot);
        testCommand = detected.command;
        detail = `detected test command: ${detected.command} (from ${detected.marker})`;
        const untested = await untestedGoModulesAt(repoRoot, detected.command);
        if (untested.modules.length > 0) {
          const { detail: why, hint } = untestedGoModulesText(untested.modules, untested.place);
          detail += `\n  note: ${why}. ${hint}`;
        }
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
}

/** `init` on a repository that has its config already: `--prompts` adds the prompts and keeps the config; else refused. */
async function initConfigured(flags: InitFlags, output: Output, file: string, prompts: string): Promise<void> {
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
    throw new RatchetError('usage', `${prompts} already exists (your prompts); init --prompts does not overwrite it.`, {
      hint: `To start again from the default prompts, move it aside (mv ${prompts} ${prompts.replace(/\.toml$/, '.old.toml')}) and run ratchet init --prompts again; ${file} is kept.`,
    });
  }
  throw new RatchetError('usage', `${file} already exists; pass --force to overwrite it.`, {
    hint: 'ratchet init --force rewrites it with the defaults.',
  });
}
