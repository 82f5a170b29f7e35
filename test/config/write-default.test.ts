import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfigText } from '../../src/config/load.js';
import { defaultConfigFile, STAGE_KEYS } from '../../src/config/schema.js';
import { configPath, renderDefaultConfig } from '../../src/config/write-default.js';

/** Dotted paths of every value in an object tree. */
function leafPaths(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, child]) =>
    child !== null && typeof child === 'object' && !Array.isArray(child)
      ? leafPaths(child as Record<string, unknown>, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

describe('renderDefaultConfig', () => {
  it('round-trips through the schema to exactly the defaults', () => {
    const { config, keys } = parseConfigText(renderDefaultConfig(), 'config.toml');
    expect(config).toEqual(defaultConfigFile());
    expect(keys).toEqual(['provider.name']);
  });

  it('says what each section does, never which design seed it came from (issue 13)', () => {
    const text = renderDefaultConfig();
    expect(text).not.toMatch(/seed/i);
    expect(text).toContain('# The static size checker: limits for the files a TDD cycle changed');
    expect(text).toContain('# `ratchet refactor`: whole-repository refactoring in small batches');
  });

  it('writes the given provider, model and test command as active settings', () => {
    const text = renderDefaultConfig({
      testCommand: 'pytest -q',
      provider: 'ollama',
      model: 'llama3.1',
    });
    const { config } = parseConfigText(text, 'config.toml');
    expect(config.provider).toMatchObject({
      name: 'ollama',
      model: 'llama3.1',
    });
    expect(config.test.command).toBe('pytest -q');
    expect(text).toContain('\ncommand = "pytest -q"\n');
  });

  it('documents every key, and every commented value is valid when uncommented', () => {
    const text = renderDefaultConfig();
    const uncommented = text
      .split('\n')
      .map((line) => (/^# (\[stages\.|[a-z_]+ = )/.test(line) ? line.slice(2) : line))
      .join('\n');
    const { config, keys } = parseConfigText(uncommented, 'config.toml');
    const defaults = defaultConfigFile();
    // max_runtime_minutes has no default (no limit): its commented line is an example.
    expect(config.refactor).toEqual({
      ...defaults.refactor,
      max_runtime_minutes: 120,
    });
    expect(config.refactor_check).toEqual(defaults.refactor_check);
    expect(config.tdd).toEqual(defaults.tdd);
    const documented = new Set(keys.map((key) => key.replace(/^stages\.[a-z_]+\./, 'stages.*.')));
    for (const key of leafPaths(defaults)) expect(documented, key).toContain(key);
    for (const key of [
      'provider.base_url',
      'provider.cassette',
      'provider.max_output_tokens',
      'test.command',
      'lint.command',
      'typecheck.command',
      'refactor.max_runtime_minutes',
    ]) {
      expect(documented, key).toContain(key);
    }
    for (const key of ['model', 'timeout', 'max_attempts', 'max_turns', 'max_output_tokens'])
      expect(documented).toContain(`stages.*.${key}`);
    expect(text).toContain(STAGE_KEYS.join(', '));
  });

  it('is loaded by loadConfig from .ratchet/config.toml', async () => {
    const repoRoot = await mkdtemp(join(tmpdir(), 'ratchet-init-'));
    try {
      await mkdir(join(repoRoot, '.ratchet'));
      await writeFile(configPath(repoRoot), renderDefaultConfig({ testCommand: 'npm test' }));
      const config = await loadConfig({ repoRoot, env: { HOME: '/h' } });
      expect(config.configFile).toBe(join(repoRoot, '.ratchet', 'config.toml'));
      expect(config.test.command).toBe('npm test');
    } finally {
      await rm(repoRoot, { recursive: true, force: true });
    }
  });
});
