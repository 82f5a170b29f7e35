/**
 * `ratchet tasks run` through the built CLI, as the tasks e2e and security tests start it: the
 * tasks written to `tasks.json` in the repository, `--refactor never`, the fake Anthropic server
 * as the provider, this machine's sandbox flags, NDJSON output.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANTHROPIC_FLAGS, ratchetEnv, type ProjectRepo } from './e2e-run.js';
import type { FakeAnthropicServer } from './fake-anthropic-server.js';
import { runCli, type CliResult } from './run-cli.js';
import { sandboxForThisMachine } from './sandbox-for-this-machine.js';
import { tasksFile, type BrainTask } from './tasks-brain.js';

export async function runTasksCli(
  repo: ProjectRepo,
  server: FakeAnthropicServer,
  tasks: ReadonlyArray<BrainTask & { dependsOn: string[] }>,
  options: { workers: number; timeoutMs: number; flags?: readonly string[] },
): Promise<CliResult> {
  const file = join(repo.root, 'tasks.json');
  await writeFile(file, tasksFile(tasks));
  return runCli(
    [
      'tasks',
      'run',
      file,
      '--workers',
      String(options.workers),
      '--refactor',
      'never',
      ...(options.flags ?? []),
      ...ANTHROPIC_FLAGS,
      ...sandboxForThisMachine().flags,
      '--json',
    ],
    { cwd: repo.dir, env: ratchetEnv(repo, server), timeoutMs: options.timeoutMs },
  );
}
