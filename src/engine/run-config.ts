import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import type { RunRow } from '../ledger/types.js';
import type { AnyWorkflow } from '../workflows/definition.js';
import type { WorkflowRegistry } from './registry.js';

/**
 * What the engine keeps in `runs.config` beside the workflow's settings: the directory the run
 * works on (`target`) and whether it is a git repository (`isGit`; false: the run's repository
 * is a git copy of it, see `runPlace`), and the places its sandbox hides besides the checkout
 * (`hidden`, `StartOptions.hidden`: a resumed run hides them too). Runs recorded before a key existed lack it. The keys of
 * the run's models (opaque, see `agent/models/run-models.ts`) sit beside them too.
 */
const EngineKeysSchema = z.object({
  target: z.string().optional(),
  isGit: z.boolean().optional(),
  hidden: z.array(z.string()).optional(),
});

/** A recorded run's stored configuration, read once: the workflow's settings and the engine's keys. */
export interface StoredRunConfig<Settings = unknown> {
  workflow: AnyWorkflow;
  settings: Settings;
  /** The directory the run works on: its repository, or the directory that repository is a copy of. */
  target: string;
  /** False: the run's repository is a git copy of `target`, a directory that is not a repository. */
  isGit: boolean;
  /** Absolute paths the run's sandbox never shows (`StartOptions.hidden`). */
  hidden: readonly string[];
}

/**
 * The value `runs.config` holds for a run: the workflow's settings, the engine's keys, and what
 * the run's models store (`RunModels.stored`, written as it is and never read here).
 */
export function storedConfig(
  settings: unknown,
  place: { target: string; isGit: boolean; hidden: readonly string[] },
  models: object,
): object {
  const own = typeof settings === 'object' && settings !== null ? settings : {};
  return { ...own, target: place.target, isGit: place.isGit, hidden: [...place.hidden], ...models };
}

/**
 * Parses a recorded run's `runs.config` with its workflow's settings schema (and the engine's
 * keys). A value that does not parse (it was written by something else) is an internal error,
 * never read half-way.
 */
export function readRunConfig(
  registry: WorkflowRegistry,
  run: Pick<RunRow, 'id' | 'workflow' | 'repoRoot' | 'config'>,
): StoredRunConfig {
  const workflow = registry.of(run);
  const value = run.config ?? {};
  const keys = EngineKeysSchema.safeParse(value);
  const settings = workflow.settings.safeParse(value);
  if (!keys.success || !settings.success) {
    const issue = (keys.error ?? settings.error)?.issues[0];
    throw new RatchetError(
      'internal',
      `The stored settings of run ${run.id} do not parse${issue ? ` (${issue.path.join('.') || '(root)'}: ${issue.message})` : ''}.`,
      { hint: 'The ledger was written by another version of Ratchet, or changed by hand.' },
    );
  }
  return {
    workflow,
    settings: settings.data,
    target: keys.data.target ?? run.repoRoot,
    isGit: keys.data.isGit ?? true,
    hidden: keys.data.hidden ?? [],
  };
}
