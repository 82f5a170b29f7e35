import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/**
 * How an exercise is solved: `direct`, one EXERCISE stage per try (Aider's protocol); `tdd`, a
 * `ratchet tdd` run per try, graded by the official tests afterwards; `solve`, the same with a
 * `ratchet solve` run.
 */
export const BENCH_MODES = ['direct', 'tdd', 'solve'] as const;
export type BenchMode = (typeof BENCH_MODES)[number];

/** One try at an exercise: the official tests' verdict and what the model spent on it. */
const TryRecordSchema = z.object({
  try: z.number().int().min(1),
  passed: z.boolean(),
  /** How the agent's stage (direct) or run (tdd: `completed`, or its error's code) ended (`completed`, `turn-limit`, `timeout`...). */
  stage: z.string(),
  testExitCode: z.number().int().nullable(),
  testTimedOut: z.boolean(),
  testSeconds: z.number(),
  tests: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), total: z.number() }),
  /** The first lines of the official tests' output (what a next try is given). */
  testOutputHead: z.string(),
  modelCalls: z.number().int(),
  /** Model calls that failed or whose reply was cut off (`length`): not a usable response. */
  malformedResponses: z.number().int(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  /** USD; null when a call's price is unknown (a local model, a model missing from the price table). */
  costUsd: z.number().nullable(),
});
export type TryRecord = z.infer<typeof TryRecordSchema>;

/**
 * `--mode tdd`: the discipline of its runs, recounted from their branches and handoff notes (see
 * `tddHonesty`): RED checkpoints whose new test failed, GREEN checkpoints whose suite passed.
 */
const HonestySchema = z.object({
  redCommits: z.number().int(),
  redFailing: z.number().int(),
  greenCommits: z.number().int(),
  greenPassing: z.number().int(),
});
export type Honesty = z.infer<typeof HonestySchema>;

/** `<out>/exercises/<language>/<exercise>.json`: one exercise, every try. */
const ExerciseRecordSchema = z.object({
  version: z.literal(1),
  language: z.string(),
  exercise: z.string(),
  mode: z.enum(BENCH_MODES),
  provider: z.string(),
  model: z.string(),
  runIds: z.array(z.string()),
  /** `completed`: every try ran to its verdict; `error`: the run failed (counted as not passed; run again on resume). */
  status: z.enum(['completed', 'error']),
  error: z.string().optional(),
  tries: z.array(TryRecordSchema),
  /** The try whose official tests passed, or null. */
  passedAtTry: z.number().int().nullable(),
  seconds: z.number(),
  /** `--mode tdd` only: over every try's tdd run. */
  honesty: HonestySchema.optional(),
});
export type ExerciseRecord = z.infer<typeof ExerciseRecordSchema>;

function recordPath(out: string, language: string, exercise: string): string {
  return join(out, 'exercises', language, `${exercise}.json`);
}

/** Writes the record whole or not at all (a killed run never leaves half a file to resume from). */
export async function writeRecord(out: string, record: ExerciseRecord): Promise<void> {
  const file = recordPath(out, record.language, record.exercise);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

/** The record of a finished exercise, or null when there is none (or it cannot be read). */
export async function readRecord(out: string, language: string, exercise: string): Promise<ExerciseRecord | null> {
  const file = recordPath(out, language, exercise);
  if (!existsSync(file)) return null;
  const parsed = ExerciseRecordSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  return parsed.success ? parsed.data : null;
}

/** Every record under `<out>/exercises/`, by language then exercise. */
export async function readRecords(out: string): Promise<ExerciseRecord[]> {
  const root = join(out, 'exercises');
  if (!existsSync(root)) return [];
  const records: ExerciseRecord[] = [];
  for (const language of (await readdir(root)).sort()) {
    const files = (await readdir(join(root, language))).filter((name) => name.endsWith('.json')).sort();
    for (const name of files) {
      const record = await readRecord(out, language, name.slice(0, -'.json'.length));
      if (record !== null) records.push(record);
    }
  }
  return records;
}
