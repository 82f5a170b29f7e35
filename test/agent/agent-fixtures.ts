import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PathPolicy, StageRequest } from '../../src/core/agent.js';
import type { EventInput } from '../../src/core/events.js';
import { createFileGuard } from '../../src/agent/file-guard.js';
import type { ToolContext } from '../../src/agent/tools/agent-tool.js';
import { createProcessRunner } from '../../src/process/runner.js';

/** A temporary directory with a `worktree/` inside (plus room for files outside it). */
export interface TempWorktree {
  /** Real path of the temporary root. */
  root: string;
  /** Real path of `root/worktree`. */
  dir: string;
  write(files: Record<string, string>): Promise<void>;
  cleanup(): Promise<void>;
}

export const OPEN_POLICY: PathPolicy = { read: ['**'], write: ['**'], denyWrite: [] };

export async function createTempWorktree(files: Record<string, string> = {}): Promise<TempWorktree> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-agent-')));
  const dir = join(root, 'worktree');
  await mkdir(dir);
  const write = async (entries: Record<string, string>): Promise<void> => {
    for (const [file, content] of Object.entries(entries)) {
      const target = join(dir, file);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
  };
  await write(files);
  return { root, dir, write, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** A tool context over a real file guard and the real process runner. */
export function toolContext(
  dir: string,
  policy: PathPolicy = OPEN_POLICY,
  overrides: Partial<ToolContext> = {},
): ToolContext {
  return {
    guard: createFileGuard(dir, policy),
    runner: createProcessRunner(),
    bashTimeoutMs: 30_000,
    ...overrides,
  };
}

/** A GREEN stage request in `worktree`, open paths, its events collected into `events`. */
export function greenStageRequest<T = unknown>(
  worktree: string,
  events: EventInput[],
  overrides: Partial<StageRequest<T>> = {},
): StageRequest<T> {
  return {
    stage: 'GREEN',
    worktree,
    systemPrompt: 'Stage: GREEN\nMake the test pass.',
    prompt: 'Implement the feature.',
    paths: OPEN_POLICY,
    maxTurns: 10,
    bashTimeoutMs: 10_000,
    emit: (event) => events.push(event),
    ...overrides,
  };
}
