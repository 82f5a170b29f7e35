/**
 * Checkpoints of an iteration's state (seed 001, checkpoint.py): a copy of every file of the
 * iteration directory (iteration.json, the logs, approvals, artifacts) under
 * `checkpoints/<n>/files/`. Restoring makes the directory exactly that copy again: files written
 * after the checkpoint are removed, the others get their saved content back.
 */
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { readTextOrNull, replaceText } from './file-stores.js';
import type { CheckpointInfo, CheckpointStore } from './stores.js';

const CHECKPOINTS = 'checkpoints';

const CheckpointInfoSchema = z.looseObject({
  number: z.number().int().positive(),
  phase: z.string(),
  createdAt: z.string(),
  description: z.string(),
});

export function createCheckpointStore(
  iterationDir: string,
  options: { phase: () => Promise<string> },
): CheckpointStore {
  const root = join(iterationDir, CHECKPOINTS);

  async function list(): Promise<CheckpointInfo[]> {
    const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
    const infos: CheckpointInfo[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || !/^\d+$/.test(entry.name)) continue;
      const text = await readTextOrNull(join(root, entry.name, 'checkpoint.json'));
      if (text === null) continue;
      const parsed = CheckpointInfoSchema.safeParse(JSON.parse(text));
      if (parsed.success) infos.push(parsed.data);
    }
    return infos.sort((a, b) => a.number - b.number);
  }

  async function stateEntries(): Promise<string[]> {
    const entries = await readdir(iterationDir);
    return entries.filter((name) => name !== CHECKPOINTS);
  }

  return {
    list,
    async create(description) {
      const existing = await list();
      const number = (existing.at(-1)?.number ?? 0) + 1;
      const dir = join(root, String(number));
      const files = join(dir, 'files');
      await mkdir(files, { recursive: true });
      for (const name of await stateEntries()) {
        await cp(join(iterationDir, name), join(files, name), { recursive: true, verbatimSymlinks: true });
      }
      const info: CheckpointInfo = {
        number,
        phase: await options.phase(),
        createdAt: new Date().toISOString(),
        description,
      };
      await replaceText(join(dir, 'checkpoint.json'), `${JSON.stringify(info, null, 2)}\n`);
      return info;
    },
    async restore(number) {
      const info = (await list()).find((checkpoint) => checkpoint.number === number);
      if (info === undefined)
        throw new RatchetError('usage', `There is no checkpoint ${number}.`, {
          hint: 'List them with `ratchet team checkpoint list`.',
        });
      const files = join(root, String(number), 'files');
      for (const name of await stateEntries()) await rm(join(iterationDir, name), { recursive: true, force: true });
      for (const name of await readdir(files)) {
        await cp(join(files, name), join(iterationDir, name), { recursive: true, verbatimSymlinks: true });
      }
      return info;
    },
  };
}
