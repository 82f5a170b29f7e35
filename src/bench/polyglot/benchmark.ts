import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';

/** `.meta/config.json` of an exercise: the files Aider's protocol reads. */
const ExerciseConfigSchema = z.looseObject({
  files: z.looseObject({
    solution: z.array(z.string()).min(1),
    test: z.array(z.string()).min(1),
    example: z.array(z.string()).default([]),
  }),
});

/** One exercise of the benchmark, as its folder holds it. */
export interface Exercise {
  language: string;
  name: string;
  /** `<benchmark>/<language>/exercises/practice/<name>`. */
  dir: string;
  /** `.docs/instructions.md`, then `.docs/instructions.append.md` when there is one. */
  instructions: string;
  solutionFiles: string[];
  testFiles: string[];
}

/** A name that is safe in a path and a shell command (every Exercism slug is). */
const SAFE_NAME = /^[a-z0-9][a-z0-9_-]*$/;

function practiceDir(root: string, language: string): string {
  return join(root, language, 'exercises', 'practice');
}

/** The languages the benchmark directory holds (folders with `exercises/practice/`), sorted. */
export async function benchmarkLanguages(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch((error: unknown) => {
    throw new RatchetError('usage', `Cannot read the benchmark directory ${root}.`, {
      cause: error,
      hint: 'Clone it first: git clone https://github.com/Aider-AI/polyglot-benchmark',
    });
  });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(practiceDir(root, entry.name)))
    .map((entry) => entry.name)
    .sort();
}

/** The exercises of one language, sorted by name; `only` keeps those named. */
export async function readExercises(root: string, language: string, only?: ReadonlySet<string>): Promise<Exercise[]> {
  const dir = practiceDir(root, language);
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory() && (only === undefined || only.has(entry.name)))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(names.map((name) => readExercise(root, language, name)));
}

async function readExercise(root: string, language: string, name: string): Promise<Exercise> {
  const dir = join(practiceDir(root, language), name);
  if (!SAFE_NAME.test(name) || !SAFE_NAME.test(language)) {
    throw new RatchetError('usage', `The exercise folder ${dir} has a name the benchmark does not take.`, {
      hint: 'Exercise and language folders are lower-case letters, digits, "-" and "_".',
    });
  }
  const configFile = join(dir, '.meta', 'config.json');
  let config: z.infer<typeof ExerciseConfigSchema>;
  try {
    config = ExerciseConfigSchema.parse(JSON.parse(await readFile(configFile, 'utf8')));
  } catch (error) {
    throw new RatchetError('usage', `${configFile} does not name the exercise's solution and test files.`, {
      cause: error,
      hint: 'Use a checkout of the benchmark in its published layout (files.solution and files.test).',
    });
  }
  const docs = join(dir, '.docs');
  const instructions = await readFile(join(docs, 'instructions.md'), 'utf8');
  const append = await readFile(join(docs, 'instructions.append.md'), 'utf8').catch(() => '');
  for (const file of [...config.files.solution, ...config.files.test]) {
    if (file.startsWith('/') || file.split('/').includes('..')) {
      throw new RatchetError('usage', `${configFile} names a file outside the exercise: ${file}.`);
    }
  }
  return {
    language,
    name,
    dir,
    instructions: append === '' ? instructions : `${instructions.trimEnd()}\n\n${append}`,
    solutionFiles: config.files.solution,
    testFiles: config.files.test,
  };
}
