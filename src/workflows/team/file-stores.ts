/**
 * The file-backed team stores. Layout under `.team/`:
 *
 * ```
 * team.json  prompts.toml  iterations.json ({"current": "iter-1", "iterations": ["iter-1"]})
 * iterations/<id>/  iteration.json conversation.jsonl debug.jsonl approvals.json
 *                   groomed.md tasks.json <name>.raw.txt checkpoints/<n>/
 * grooming/<slug>/  grooming.json conversation.jsonl debug.jsonl
 * ```
 *
 * JSON files are replaced whole (written beside, then renamed), logs are appended line by line.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { redactValue, type Redactor } from '../../core/redact.js';
import type { DebugEntry } from './events.js';
import { scopeHistory } from './history.js';
import type {
  ApprovalStore,
  ArtifactStore,
  ConversationStore,
  CurrentIteration,
  DebugStore,
  IterationStore,
} from './stores.js';
import {
  ApprovalSchema,
  IterationSchema,
  TeamMessageSchema,
  TeamTaskSchema,
  type Approval,
  type Iteration,
  type TeamMessage,
  type TeamTask,
} from './types.js';

const IterationIndexSchema = z.looseObject({
  current: z.string().nullable(),
  iterations: z.array(z.string()),
});

export async function readTextOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return null;
    throw error;
  }
}

/** Writes `text` to a file beside `file`, then renames it into place (no half-written JSON). */
export async function replaceText(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}

function readJson<T>(text: string, file: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('config', `${file} is not valid JSON.`, {
      hint: 'Fix the file by hand, or restore a checkpoint (`ratchet team checkpoint list`).',
      cause: error,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new RatchetError('config', `${file} does not have the expected shape: ${parsed.error.issues[0]?.message}`, {
      hint: 'Fix the file by hand, or restore a checkpoint (`ratchet team checkpoint list`).',
    });
  return parsed.data;
}

async function readJsonLines<T>(file: string, schema: z.ZodType<T>): Promise<T[]> {
  const text = await readTextOrNull(file);
  if (text === null) return [];
  return text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, number }) => readJson(line, `${file}:${number}`, schema));
}

/** `redact` applies to each message before it is written (default: none). */
export function createConversationStore(dir: string, redact: Redactor = (text) => text): ConversationStore {
  const logPath = join(dir, 'conversation.jsonl');
  return {
    logPath,
    readFull: () => readJsonLines(logPath, TeamMessageSchema),
    async readPhaseHistory() {
      return scopeHistory(await readJsonLines(logPath, TeamMessageSchema), 'phase');
    },
    async append(msg: TeamMessage) {
      await mkdir(dir, { recursive: true });
      await appendFile(logPath, `${JSON.stringify(redactValue(msg, redact))}\n`);
    },
  };
}

/** `redact` applies to each entry before it is written (default: none). */
export function createDebugStore(dir: string, redact: Redactor = (text) => text): DebugStore {
  const logPath = join(dir, 'debug.jsonl');
  return {
    logPath,
    async append(entry: DebugEntry) {
      await mkdir(dir, { recursive: true });
      await appendFile(logPath, `${JSON.stringify(redactValue({ ...entry, at: new Date().toISOString() }, redact))}\n`);
    },
  };
}

function iterationsDir(teamDir: string): string {
  return join(teamDir, 'iterations');
}

export function createIterationStore(teamDir: string): IterationStore {
  const indexFile = join(teamDir, 'iterations.json');
  const dirOf = (id: string): string => join(iterationsDir(teamDir), id);
  const fileOf = (id: string): string => join(dirOf(id), 'iteration.json');

  async function readIndex(): Promise<z.infer<typeof IterationIndexSchema>> {
    const text = await readTextOrNull(indexFile);
    return text === null ? { current: null, iterations: [] } : readJson(text, indexFile, IterationIndexSchema);
  }

  async function read(id: string): Promise<Iteration> {
    const file = fileOf(id);
    const text = await readTextOrNull(file);
    if (text === null)
      throw new RatchetError('config', `The iteration ${id} has no ${file}.`, {
        hint: 'Restore it from a checkpoint, or start a new iteration with `ratchet team run "<description>"`.',
      });
    return readJson(text, file, IterationSchema);
  }

  async function findCurrent(): Promise<CurrentIteration | null> {
    const index = await readIndex();
    if (index.current === null) return null;
    return { iteration: await read(index.current), dir: dirOf(index.current) };
  }

  async function write(iteration: Iteration): Promise<void> {
    await mkdir(dirOf(iteration.id), { recursive: true });
    await replaceText(fileOf(iteration.id), `${JSON.stringify(iteration, null, 2)}\n`);
  }

  return {
    async getCurrent(): Promise<CurrentIteration> {
      const current = await findCurrent();
      if (current === null)
        throw new RatchetError('usage', 'There is no current team iteration.', {
          hint: 'Start one with `ratchet team run "<iteration description>"`.',
        });
      return current;
    },
    findCurrent,
    async create({ description, maxTurns }) {
      const index = await readIndex();
      let number = index.iterations.length + 1;
      while (index.iterations.includes(`iter-${number}`)) number += 1;
      const iteration: Iteration = {
        id: `iter-${number}`,
        description,
        status: 'in-progress',
        phase: 'refinement',
        max_turns: maxTurns,
      };
      await write(iteration);
      await replaceText(
        indexFile,
        `${JSON.stringify({ ...index, current: iteration.id, iterations: [...index.iterations, iteration.id] }, null, 2)}\n`,
      );
      return { iteration, dir: dirOf(iteration.id) };
    },
    async savePhase(id, phase) {
      await write({ ...(await read(id)), phase });
    },
    async saveFields(id, fields) {
      await write({ ...(await read(id)), ...fields, id });
    },
  };
}

export function createApprovalStore(dir: string): ApprovalStore {
  const file = join(dir, 'approvals.json');
  const schema = z.array(ApprovalSchema);
  const list = async (): Promise<Approval[]> => {
    const text = await readTextOrNull(file);
    return text === null ? [] : readJson(text, file, schema);
  };
  const save = async (approvals: Approval[]): Promise<void> => {
    await mkdir(dir, { recursive: true });
    await replaceText(file, `${JSON.stringify(approvals, null, 2)}\n`);
  };
  return {
    list,
    async pending() {
      return (await list()).filter((approval) => approval.status === 'pending');
    },
    async add(approval) {
      await save([...(await list()), approval]);
    },
    async resolve(id, decision) {
      const approvals = await list();
      const found = approvals.find((approval) => approval.id === id);
      if (found === undefined || found.status !== 'pending') {
        const pendingIds = approvals.filter((approval) => approval.status === 'pending').map((approval) => approval.id);
        throw new RatchetError(
          'usage',
          found === undefined ? `There is no approval ${id}.` : `The approval ${id} is already ${found.status}.`,
          {
            hint:
              pendingIds.length === 0
                ? 'Nothing is pending.'
                : `Pending: ${pendingIds.join(', ')} (ratchet team approvals).`,
          },
        );
      }
      const resolved: Approval = {
        ...found,
        status: decision.status,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      };
      await save(approvals.map((approval) => (approval.id === id ? resolved : approval)));
      return resolved;
    },
  };
}

export function createArtifactStore(dir: string): ArtifactStore {
  const groomed = join(dir, 'groomed.md');
  const tasks = join(dir, 'tasks.json');
  return {
    readGroomed: () => readTextOrNull(groomed),
    async writeGroomed(markdown) {
      await replaceText(groomed, `${markdown.trim()}\n`);
    },
    async readTasks(): Promise<TeamTask[] | null> {
      const text = await readTextOrNull(tasks);
      return text === null ? null : readJson(text, tasks, z.array(TeamTaskSchema));
    },
    async writeTasks(list) {
      await replaceText(tasks, `${JSON.stringify(list, null, 2)}\n`);
    },
    async writeRaw(name, text) {
      const file = join(dir, `${name}.raw.txt`);
      await replaceText(file, text);
      return file;
    },
  };
}
