import type { ResolvedConfig } from '../../config/resolved.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { fileRole } from '../../code/file-role.js';
import { checkNeedsRefactor } from '../../code/size-check.js';
import type { CodeIndex } from '../../code/index/types.js';
import { detectTestCommand } from '../../verify/detect.js';
import { untestedGoModulesText, type GoTestPlace } from '../../verify/go-modules.js';
import { verificationFileMatcher } from '../../verify/verification-files.js';
import { deadFunctions } from './dead-code.js';
import type { FileFacts, PlanBounds } from './plan.js';

/** The verifier commands: the configured ones, else the detected test command (+ lint, typecheck for full). */
export async function verifierCommands(
  root: string,
  settings: ResolvedConfig['refactor'],
  config: ResolvedConfig,
): Promise<{ fast: string[]; full: string[] }> {
  let fast = settings.fastVerifier;
  let full = settings.fullVerifier;
  if (fast.length === 0 || full.length === 0) {
    const detected = await detectTestCommand(root, config.test.command).catch((error: unknown) => {
      const failure = toRatchetError(error);
      if (failure.code !== 'config') throw failure;
      throw new RatchetError(
        'config',
        `No verifier commands for ${root}: ${[fast.length === 0 ? 'fast_verifier' : null, full.length === 0 ? 'full_verifier' : null].filter(Boolean).join(' and ')} not set, and no test command was found to use instead.`,
        {
          hint: 'Set fast_verifier and full_verifier ([refactor] in .ratchet/config.toml, or .refactor-bot.config.json), or [test] command.',
          cause: error,
        },
      );
    });
    if (fast.length === 0) fast = [detected.command];
    if (full.length === 0)
      full = [
        detected.command,
        ...[config.lint.command, config.typecheck.command].filter((command): command is string => Boolean(command)),
      ];
  }
  return { fast, full };
}

/**
 * The bounds of a run's plan (seed 002, 11 and 15.1), for `refactor run` and `refactor plan`
 * alike: a configured formatter starts it with the formatting-only batch, and no batch is planned
 * on a file that defines verification (admission refuses every patch to it) nor in a directory no
 * verifier command tests.
 */
export function planBounds(
  settings: ResolvedConfig['refactor'],
  index: CodeIndex,
  commands: { fast: string[]; full: string[] },
  root: string,
  /** Directories no verifier command tests (`untestedGoModulesOf`): no batch is planned there. */
  untestedDirs: readonly string[],
): PlanBounds {
  return {
    untestedDirs,
    maxBatches: settings.maxBatches,
    diffBudgetLoc: settings.diffBudgetLoc,
    scopeGlobs: settings.scopeGlobs,
    scopeExcludes: settings.scopeExcludes,
    files: index.files.map((file) => file.path),
    formatting: settings.formatter.length > 0,
    isProtected: verificationFileMatcher([...commands.fast, ...commands.full], root),
  };
}

/** What a plan says about the directories it left out (`planBounds`' `untestedDirs`), and how to include them. */
export function untestedPlanText(dirs: readonly string[], place?: GoTestPlace): string {
  const { detail, hint } = untestedGoModulesText(dirs, place);
  return `No batch is planned in ${dirs.map((dir) => `${dir}/`).join(', ')}: ${detail}. ${hint}`;
}

/** Facts the heuristic planner needs, per indexed source file. */
export async function fileFacts(index: CodeIndex, root: string, config: ResolvedConfig): Promise<FileFacts[]> {
  const risk = new Map(index.risk.map((entry) => [entry.path, entry]));
  const dead = await deadFunctions(index, root);
  const facts: FileFacts[] = [];
  for (const file of index.files) {
    if (file.language === null) continue;
    const entry = risk.get(file.path);
    const check = await checkNeedsRefactor([file.path], root, config.refactorCheck);
    facts.push({
      path: file.path,
      language: file.language,
      lines: file.lines,
      fanIn: entry?.fanIn ?? 0,
      churn: entry?.churn ?? 0,
      hasTest: (entry?.tests.length ?? 0) > 0,
      risk: entry?.score ?? 0,
      sizeReasons: check.reasons,
      unusedPrivateSymbols: dead.get(file.path) ?? [],
      role: await fileRole(file, root),
    });
  }
  return facts;
}
