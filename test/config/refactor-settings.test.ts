import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { configPath } from '../../src/config/write-default.js';
import { loadRefactorSettings, REFACTOR_BOT_CONFIG } from '../../src/workflows/refactor/settings.js';

let repoRoot: string;
const env = { HOME: '/home/tester' };

beforeEach(async () => {
  repoRoot = await mkdtemp(join(tmpdir(), 'ratchet-refactor-settings-'));
});
afterEach(async () => {
  await rm(repoRoot, { recursive: true, force: true });
});

async function writeToml(text: string): Promise<void> {
  await mkdir(join(repoRoot, '.ratchet'), { recursive: true });
  await writeFile(configPath(repoRoot), text);
}

async function settings() {
  return loadRefactorSettings(repoRoot, await loadConfig({ repoRoot, env }));
}

describe('max_runtime_minutes (seed 002, section 19)', () => {
  it('is unlimited by default', async () => {
    expect((await settings()).maxRuntimeMinutes).toBeNull();
  });

  it('is read from the [refactor] table of .ratchet/config.toml', async () => {
    await writeToml('[refactor]\nmax_runtime_minutes = 45\n');
    expect((await settings()).maxRuntimeMinutes).toBe(45);
  });

  it('is read from .refactor-bot.config.json under the same key, which wins over config.toml', async () => {
    await writeToml('[refactor]\nmax_runtime_minutes = 45\n');
    await writeFile(join(repoRoot, REFACTOR_BOT_CONFIG), JSON.stringify({ max_runtime_minutes: 2.5 }));
    const loaded = await settings();
    expect(loaded.maxRuntimeMinutes).toBe(2.5);
    expect(loaded.source).toBe(join(repoRoot, REFACTOR_BOT_CONFIG));
  });

  it('falls back to config.toml when the JSON file does not set it', async () => {
    await writeToml('[refactor]\nmax_runtime_minutes = 45\n');
    await writeFile(join(repoRoot, REFACTOR_BOT_CONFIG), JSON.stringify({ max_batches: 3 }));
    expect((await settings()).maxRuntimeMinutes).toBe(45);
  });

  it('must be a positive number in either file', async () => {
    await writeFile(join(repoRoot, REFACTOR_BOT_CONFIG), JSON.stringify({ max_runtime_minutes: 0 }));
    const jsonError: unknown = await settings().catch((error: unknown) => error);
    expect(isRatchetError(jsonError, 'config')).toBe(true);
    expect(String((jsonError as Error).message)).toContain('max_runtime_minutes');

    await rm(join(repoRoot, REFACTOR_BOT_CONFIG));
    await writeToml('[refactor]\nmax_runtime_minutes = "soon"\n');
    const tomlError: unknown = await settings().catch((error: unknown) => error);
    expect(isRatchetError(tomlError, 'config')).toBe(true);
  });
});

describe('formatter (seed 002, 17.3)', () => {
  it('is empty by default (no formatting-only batch)', async () => {
    expect((await settings()).formatter).toEqual([]);
  });

  it('is read from config.toml, and from .refactor-bot.config.json, which wins', async () => {
    await writeToml('[refactor]\nformatter = ["npx prettier --write ."]\n');
    expect((await settings()).formatter).toEqual(['npx prettier --write .']);
    await writeFile(
      join(repoRoot, REFACTOR_BOT_CONFIG),
      JSON.stringify({ formatter: ['ruff format .', 'npx prettier --write src'] }),
    );
    expect((await settings()).formatter).toEqual(['ruff format .', 'npx prettier --write src']);
  });

  it('must be a list of non-empty commands', async () => {
    await writeFile(join(repoRoot, REFACTOR_BOT_CONFIG), JSON.stringify({ formatter: 'npx prettier --write .' }));
    const jsonError: unknown = await settings().catch((error: unknown) => error);
    expect(isRatchetError(jsonError, 'config')).toBe(true);
    expect(String((jsonError as Error).message)).toContain('formatter');
    await rm(join(repoRoot, REFACTOR_BOT_CONFIG));
    await writeToml('[refactor]\nformatter = [""]\n');
    expect(isRatchetError(await settings().catch((error: unknown) => error), 'config')).toBe(true);
  });
});
