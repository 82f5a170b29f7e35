import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError, RatchetError } from '../../src/core/errors.js';
import {
  loadConfig,
  resolveProjectRoot,
  resolveRatchetHome,
  type ConfigEnv,
  type ConfigFlags,
} from '../../src/config/load.js';
import { stageModelOverrideNotice, stageSettings } from '../../src/config/resolved.js';
import { DEFAULT_MODEL } from '../../src/config/schema.js';
import { configPath } from '../../src/config/write-default.js';

let repoRoot: string;
const env: ConfigEnv = { HOME: '/home/tester' };

beforeEach(async () => {
  repoRoot = await mkdtemp(join(tmpdir(), 'ratchet-config-'));
});
afterEach(async () => {
  await rm(repoRoot, { recursive: true, force: true });
});

async function writeConfig(text: string): Promise<string> {
  const file = configPath(repoRoot);
  await mkdir(join(repoRoot, '.ratchet'), { recursive: true });
  await writeFile(file, text);
  return file;
}

async function loadError(options: { env?: ConfigEnv; flags?: ConfigFlags } = {}): Promise<RatchetError> {
  const error: unknown = await loadConfig({
    repoRoot,
    env: options.env ?? env,
    flags: options.flags ?? {},
  }).catch((e: unknown) => e);
  if (!isRatchetError(error)) throw new Error(`expected a RatchetError, got ${String(error)}`);
  return error;
}

describe('loadConfig', () => {
  it('uses the defaults when there is no config file', async () => {
    const config = await loadConfig({ repoRoot, env });
    expect(config.configFile).toBeNull();
    expect(config.repoRoot).toBe(repoRoot);
    expect(config.home).toBe('/home/tester/.ratchet');
    expect(config.provider).toEqual({
      name: 'anthropic',
      model: DEFAULT_MODEL,
      baseUrl: undefined,
      cassette: undefined,
      maxRetries: 3,
      stream: true,
    });
    expect(config.test.timeoutMs).toBe(600_000);
    expect(config.test.patterns).toContain('**/*.test.*');
    expect(config.bash.timeoutMs).toBe(120_000);
    expect(config.tdd).toEqual({
      refactor: 'always',
      maxAttempts: 3,
      maxTurns: 40,
      stageTimeoutMs: 900_000,
      reviewTests: true,
      reviewFailureLimit: 3,
    });
    expect(config.refactorCheck).toEqual({
      splitThreshold: 400,
      hardLimit: 800,
      maxFunctionLength: 50,
      maxClassMethods: 15,
    });
    expect(config.refactor.claude.allowedTools).toBe('Read,Edit,Bash,Grep,Glob');
    expect(config.refactor.scopeExcludes).toContain('**/node_modules/**');
    expect(config.origins).toEqual({});
  });

  it('applies flags > env > file > defaults, key by key', async () => {
    const file = await writeConfig(`
[provider]
model = "file-model"
max_retries = 5

[tdd]
max_attempts = 5
refactor = "never"

[test]
command = "npm test"
timeout = 30
`);
    const fileOnly = await loadConfig({ repoRoot, env });
    expect(fileOnly.configFile).toBe(file);
    expect(fileOnly.provider.model).toBe('file-model');
    expect(fileOnly.provider.maxRetries).toBe(5);
    expect(fileOnly.tdd.maxAttempts).toBe(5);
    expect(fileOnly.test).toMatchObject({
      command: 'npm test',
      timeoutMs: 30_000,
    });
    expect(fileOnly.origins['provider.model']).toBe('file');

    const withEnv = await loadConfig({
      repoRoot,
      env: { ...env, TDD_MODEL: 'env-model', TDD_MAX_RETRIES: '4' },
    });
    expect(withEnv.provider.model).toBe('env-model');
    expect(withEnv.tdd.maxAttempts).toBe(4);
    expect(withEnv.tdd.refactor).toBe('never');
    expect(withEnv.origins).toMatchObject({
      'provider.model': 'env',
      'tdd.max_attempts': 'env',
      'tdd.refactor': 'file',
    });

    const withFlags = await loadConfig({
      repoRoot,
      env: { ...env, TDD_MODEL: 'env-model', TDD_MAX_RETRIES: '4' },
      flags: { model: 'flag-model', maxAttempts: 2, refactor: 'when-needed' },
    });
    expect(withFlags.provider.model).toBe('flag-model');
    expect(withFlags.tdd).toMatchObject({
      maxAttempts: 2,
      refactor: 'when-needed',
    });
    expect(withFlags.provider.maxRetries).toBe(5);
    expect(withFlags.origins).toMatchObject({
      'provider.model': 'flag',
      'tdd.max_attempts': 'flag',
      'tdd.refactor': 'flag',
    });
  });

  it('resolves per-stage overrides, falling back to the global settings', async () => {
    await writeConfig(`
[tdd]
max_turns = 30
stage_timeout = 100

[stages.red]
model = "red-model"
timeout = 60
max_attempts = 5

[stages.refactor]
max_turns = 12
`);
    const config = await loadConfig({
      repoRoot,
      env: { ...env, TDD_MODEL: 'env-model' },
    });
    expect(stageSettings(config, 'RED')).toEqual({
      model: 'red-model',
      timeoutMs: 60_000,
      maxAttempts: 5,
      maxTurns: 30,
    });
    expect(stageSettings(config, 'REFACTOR')).toEqual({
      model: 'env-model',
      timeoutMs: 100_000,
      maxAttempts: 3,
      maxTurns: 12,
    });
    expect(stageSettings(config, 'GREEN')).toEqual({
      model: 'env-model',
      timeoutMs: 100_000,
      maxAttempts: 3,
      maxTurns: 30,
    });
    expect(config.stages).toEqual({
      RED: { model: 'red-model', timeoutMs: 60_000, maxAttempts: 5 },
      REFACTOR: { maxTurns: 12 },
    });

    // An explicit --model / --max-attempts applies to every stage.
    const flagged = await loadConfig({
      repoRoot,
      env,
      flags: { model: 'flag-model', maxAttempts: 1 },
    });
    expect(stageSettings(flagged, 'RED')).toEqual({
      model: 'flag-model',
      timeoutMs: 60_000,
      maxAttempts: 1,
      maxTurns: 30,
    });
  });

  it('resolves max_output_tokens: the stage value, else [provider], else undefined (the model default)', async () => {
    expect(stageSettings(await loadConfig({ repoRoot, env }), 'RED').maxOutputTokens).toBeUndefined();
    await writeConfig(`
[provider]
max_output_tokens = 4096

[stages.green]
max_output_tokens = 32000
`);
    const config = await loadConfig({ repoRoot, env });
    expect(config.provider.maxOutputTokens).toBe(4096);
    expect(stageSettings(config, 'RED').maxOutputTokens).toBe(4096);
    expect(stageSettings(config, 'GREEN').maxOutputTokens).toBe(32_000);
    await writeConfig('[provider]\nmax_output_tokens = 0\n');
    expect((await loadError()).message).toContain('max_output_tokens');
  });

  it('keeps the stage models --model overrides, for the run to warn about', async () => {
    await writeConfig(`
[stages.red]
model = "red-model"

[stages.green]
model = "flag-model"

[stages.refactor]
model = "refactor-model"
`);
    const unflagged = await loadConfig({ repoRoot, env });
    expect(unflagged.overriddenStageModels).toBeUndefined();
    expect(stageModelOverrideNotice(unflagged)).toBeNull();

    const flagged = await loadConfig({ repoRoot, env, flags: { model: 'flag-model' } });
    // Flags win over the file (and --model applies to every stage), but never silently.
    expect(stageSettings(flagged, 'RED').model).toBe('flag-model');
    expect(flagged.overriddenStageModels).toEqual([
      { stage: 'red', model: 'red-model' },
      { stage: 'refactor', model: 'refactor-model' },
    ]);
    expect(stageModelOverrideNotice(flagged)).toBe(
      '--model flag-model applies to every stage: the stage models of .ratchet/config.toml are not used ([stages.red] model = "red-model", [stages.refactor] model = "refactor-model"). Leave out --model to use them.',
    );
    // A refactor run has only the refactor stage.
    expect(stageModelOverrideNotice(flagged, ['refactor'])).toContain('([stages.refactor] model = "refactor-model")');
    expect(stageModelOverrideNotice(flagged, ['plan'])).toBeNull();
  });

  it('reports invalid TOML with the file and line', async () => {
    const file = await writeConfig('[provider]\nname = "anthropic"\nmodel = \n');
    const error = await loadError();
    expect(error.code).toBe('config');
    expect(error.message).toContain(file);
    expect(error.message).toContain('line 3');
    expect(error.details).toMatchObject({ file, line: 3 });
    expect(error.hint).toContain(`${file}:3`);
  });

  it('rejects an unknown key, naming it and suggesting the right one', async () => {
    const file = await writeConfig('[provider]\nname = "anthropic"\nmodle = "x"\n');
    const error = await loadError();
    expect(error.code).toBe('config');
    expect(error.message).toBe(`Unknown key "provider.modle" in ${file} (line 3)`);
    expect(error.hint).toContain('Did you mean "provider.model"?');
  });

  it('rejects unknown tables, including unknown stages', async () => {
    await writeConfig('[provder]\nname = "openai"\n');
    expect((await loadError()).message).toMatch(/Unknown key "provder" in .* \(line 1\)/);
    await writeConfig('[stages.review]\nmodel = "x"\n');
    const error = await loadError();
    expect(error.message).toMatch(/Unknown key "stages.review"/);
    expect(error.hint).toContain('plan, red, red_fix, green, fix, refactor');
  });

  it('rejects invalid values with the key path, line and a description of the key', async () => {
    await writeConfig('[tdd]\nrefactor = "always"\nmax_attempts = 0\n');
    const error = await loadError();
    expect(error.message).toMatch(/Invalid value for "tdd.max_attempts" in .* \(line 3\)/);
    expect(error.hint).toContain('Attempts per stage');
    await writeConfig('[tdd]\nrefactor = "sometimes"\n');
    expect((await loadError()).message).toMatch(/"tdd.refactor".*line 2.*always/);
  });

  it('suggests the nearest provider for a misspelt one, in the file and on the command line', async () => {
    // Issue 13: `name = "ollma"` got the list of providers but no "did you mean ollama".
    await writeConfig('[provider]\nname = "ollma"\nmodel = "llama3.2"\n');
    const error = await loadError();
    expect(error.message).toMatch(/Invalid value for "provider.name" in .* \(line 2\)/);
    expect(error.hint).toMatch(/^Did you mean "ollama"\? /);
    await writeConfig('[tdd]\nrefactor = "allways"\n');
    expect((await loadError()).hint).toMatch(/^Did you mean "always"\? /);
    // Nothing near enough: no guess.
    await writeConfig('[provider]\nname = "mistral"\n');
    expect((await loadError()).hint).not.toContain('Did you mean');
    await writeConfig('');
    const flagError = await loadError({ flags: { provider: 'antropic' } });
    expect(flagError.code).toBe('usage');
    expect(flagError.hint).toMatch(/^Did you mean --provider anthropic\? /);
  });

  it('shows every problem of a file, each on its own line with its fix', async () => {
    // Issue 13: "(and 1 more problem)" without showing it.
    const file = await writeConfig('[provider]\nname = "ollma"\nmodle = "x"\n\n[tdd]\nmax_attempts = 0\n');
    const error = await loadError();
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`3 problems in ${file}:`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}- Unknown key "provider.modle" in .* \(line 3\)\. Did you mean "provider.model"\? /),
      expect.stringMatching(/^ {2}- Invalid value for "provider.name" in .* \(line 2\): .*\. Did you mean "ollama"\? /),
      expect.stringMatching(/^ {2}- Invalid value for "tdd.max_attempts" in .* \(line 6\): .*\. .*Attempts per stage/),
    ]);
    expect(error.message).not.toContain('more problem');
  });

  it('says how to write a value of the wrong type', async () => {
    const hint = async (text: string): Promise<string | undefined> => {
      await writeConfig(text);
      return (await loadError()).hint;
    };
    expect(await hint('[refactor]\nfast_verifier = "npm test"\n')).toBe(
      'Write a list: fast_verifier = [ "npm test" ]. "refactor.fast_verifier": Commands run after every batch (default: test command).',
    );
    expect(await hint('[test]\ntimeout = "10"\n')).toMatch(
      /^Write the number without quotes: timeout = 10\. "test.timeout": /,
    );
    expect(await hint('[tdd]\nmax_attempts = 2.5\n')).toMatch(/^Write a whole number: max_attempts = 3\. /);
    expect(await hint('[provider]\nstream = "false"\n')).toMatch(
      /^Write true or false without quotes: stream = false\. /,
    );
    expect(await hint('[test]\ncommand = 5\n')).toMatch(/^Quote it: command = "5"\. /);
    // Nothing to suggest: only the description of the key.
    expect(await hint('[test]\npatterns = [1]\n')).toMatch(/^"test.patterns.0"|^Check "test.patterns.0"/);
  });

  it('applies the cross-field rules', async () => {
    expect((await loadError({ flags: { provider: 'replay' } })).details).toMatchObject({
      rule: 'replay-needs-cassette',
    });
    expect((await loadError({ flags: { provider: 'ollama' } })).details).toMatchObject({
      rule: 'provider-needs-explicit-model',
    });
    expect(
      (
        await loadError({
          flags: { provider: 'openai-compatible', model: 'm' },
        })
      ).details,
    ).toMatchObject({
      rule: 'openai-compatible-needs-base-url',
    });
    // Two problems at once: both are shown, each on its own line with its fix (issue 13: the
    // second used to be "(and 1 more problem)" with its text run into the first one's hint).
    const both = await loadError({ flags: { provider: 'openai-compatible' } });
    expect(both.message.split('\n')).toEqual([
      '2 problems in the configuration:',
      '  - The openai-compatible provider needs a base URL. Pass --base-url http://host:port/v1, set OPENAI_BASE_URL, or set [provider] base_url in .ratchet/config.toml.',
      '  - Provider "openai-compatible" has no default model. Pass --model <id>, set TDD_MODEL, or set [provider] model in .ratchet/config.toml.',
    ]);
    expect(both.message).not.toContain('more problem');
    // One problem ends its sentence before the hint starts another.
    const one = await loadError({ flags: { provider: 'ollama' } });
    expect(one.message).toBe('Provider "ollama" has no default model.');
    expect(one.hint).toBe('Pass --model <id>, set TDD_MODEL, or set [provider] model in .ratchet/config.toml.');
    // OPENAI_BASE_URL names the server too, as the README's provider table says.
    const compatible = await loadConfig({
      repoRoot,
      env: { ...env, OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' },
      flags: { provider: 'openai-compatible', model: 'm' },
    });
    expect(compatible.provider).toMatchObject({ name: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1' });
    const ollama = await loadConfig({
      repoRoot,
      env: { ...env, TDD_MODEL: 'llama3' },
      flags: { provider: 'ollama' },
    });
    expect(ollama.provider).toMatchObject({ name: 'ollama', model: 'llama3' });

    await writeConfig('[refactor_check]\nsplit_threshold = 500\nhard_limit = 500\n');
    const error = await loadError();
    expect(error.details).toMatchObject({
      rule: 'hard-limit-above-split-threshold',
    });
    expect(error.message).toContain(configPath(repoRoot));
  });

  it('resolves the replay cassette against the repository', async () => {
    const config = await loadConfig({
      repoRoot,
      env,
      flags: { provider: 'replay', cassette: 'tapes/run.ndjson' },
    });
    expect(config.provider.cassette).toBe(join(repoRoot, 'tapes/run.ndjson'));
  });

  it('rejects invalid env values and flags', async () => {
    const envError = await loadError({
      env: { ...env, TDD_MAX_RETRIES: 'three' },
    });
    expect(envError.code).toBe('config');
    expect(envError.message).toContain('TDD_MAX_RETRIES');
    const flagError = await loadError({ flags: { provider: 'gemini' } });
    expect(flagError.code).toBe('usage');
    expect(flagError.message).toContain('--provider');
    expect((await loadError({ flags: { baseUrl: 'not a url' } })).message).toContain('--base-url');
  });
});

describe('resolveProjectRoot', () => {
  it('prefers --cwd, then TDD_PROJECT_ROOT, then the process directory', () => {
    expect(
      resolveProjectRoot({
        cwdFlag: 'sub',
        env: { TDD_PROJECT_ROOT: '/elsewhere' },
        processCwd: '/work',
      }),
    ).toBe('/work/sub');
    expect(
      resolveProjectRoot({
        env: { TDD_PROJECT_ROOT: '/elsewhere' },
        processCwd: '/work',
      }),
    ).toBe('/elsewhere');
    expect(
      resolveProjectRoot({
        env: { TDD_PROJECT_ROOT: 'rel' },
        processCwd: '/work',
      }),
    ).toBe('/work/rel');
    expect(
      resolveProjectRoot({
        cwdFlag: undefined,
        env: { TDD_PROJECT_ROOT: '' },
        processCwd: '/work',
      }),
    ).toBe('/work');
  });
});

describe('resolveRatchetHome', () => {
  it('defaults to ~/.ratchet and expands ~', () => {
    expect(resolveRatchetHome({ HOME: '/h' })).toBe('/h/.ratchet');
    expect(resolveRatchetHome({ HOME: '/h', RATCHET_HOME: '~/rh' })).toBe('/h/rh');
    expect(resolveRatchetHome({ HOME: '/h', RATCHET_HOME: '/var/ratchet/' })).toBe('/var/ratchet');
  });
});
