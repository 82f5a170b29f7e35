/**
 * `ratchet team init` a second time refuses, naming the files that are there in a sentence whose
 * verb agrees with how many there are.
 */
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../../src/core/errors.js';
import { initTeam } from '../../../src/workflows/team/setup.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';

describe('team init when the team is set up', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'team-init-again-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const init = () => initTeam({ projectRoot: root, packageRoot: PACKAGE_ROOT, agents: 2 });
  const refusal = async (): Promise<string> => {
    const error: unknown = await init().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (!isRatchetError(error, 'usage')) throw new Error(`expected a usage error, got ${String(error)}`);
    return error.message;
  };

  it('says both files exist when both are there', async () => {
    await init();
    expect(await refusal()).toBe(
      `The team is already set up: ${join(root, '.team', 'team.json')} and ${join(root, '.team', 'prompts.toml')} exist.`,
    );
  });

  it('says the one file exists when only one is there', async () => {
    await init();
    await unlink(join(root, '.team', 'team.json'));
    expect(await refusal()).toBe(`The team is already set up: ${join(root, '.team', 'prompts.toml')} exists.`);
  });
});
