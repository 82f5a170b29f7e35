import { appendFile, cp, mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import type { ProcessRunner } from '../../process/types.js';
import type { Exercise } from './benchmark.js';

/** Whoever commits the exercise's first state: the benchmark, not the user. */
const GIT_IDENTITY = ['-c', 'user.name=ratchet bench', '-c', 'user.email=bench@ratchet.invalid'];

/**
 * Makes `<into>/<exercise>` afresh: a git repository holding the exercise as the model may see
 * it, committed: the stubs, the instructions and the build files, without `.meta/` (the example
 * solution) and without the official tests, which never enter its history. The folder keeps the
 * exercise's name, as some build files read it. `nodeModules`: linked in as `node_modules` (the
 * shared JavaScript dependencies), kept out of git.
 */
export async function createExerciseRepo(
  exercise: Exercise,
  into: string,
  runner: ProcessRunner,
  nodeModules: string | null,
): Promise<string> {
  const repo = join(into, exercise.name);
  await rm(repo, { recursive: true, force: true });
  await mkdir(into, { recursive: true });
  const withheld = new Set(exercise.testFiles.map((file) => join(exercise.dir, file)));
  await cp(exercise.dir, repo, {
    recursive: true,
    filter: (source) =>
      !withheld.has(source) && source !== join(exercise.dir, '.meta') && source !== join(exercise.dir, 'node_modules'),
  });
  const git = async (...args: string[]): Promise<void> => {
    const result = await runner.run({ command: 'git', args: [...GIT_IDENTITY, ...args], cwd: repo });
    if (result.exitCode !== 0) {
      throw new RatchetError('config', `git ${args[0] ?? ''} failed in ${repo}: ${result.output.trim()}`);
    }
  };
  await git('init', '--quiet', '--initial-branch=main');
  if (nodeModules !== null) {
    await symlink(nodeModules, join(repo, 'node_modules'), 'dir');
    await mkdir(join(repo, '.git', 'info'), { recursive: true });
    await appendFile(join(repo, '.git', 'info', 'exclude'), '/node_modules\n');
  }
  await git('add', '--all');
  await git('commit', '--quiet', '--no-verify', '-m', `bench: ${exercise.language}/${exercise.name} as given`);
  return repo;
}
