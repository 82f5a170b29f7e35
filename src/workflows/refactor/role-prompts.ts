import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../config/prompts.js';

/** The refactor roles' system prompts: versioned files shipped in `prompts/refactor/` (seed 002, 5.5). */
export interface RolePrompts {
  planner: string;
  patcher: string;
  critic: string;
}

export async function loadRolePrompts(root: string = packageRoot()): Promise<RolePrompts> {
  const read = (name: string): Promise<string> =>
    readFile(join(root, 'prompts', 'refactor', `${name}.system.txt`), 'utf8');
  const [planner, patcher, critic] = await Promise.all([read('planner'), read('patcher'), read('critic')]);
  return { planner, patcher, critic };
}
