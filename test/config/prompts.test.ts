import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_STAGES } from '../../src/core/stages.js';
import { isRatchetError } from '../../src/core/errors.js';
import {
  loadPrompts,
  packagePromptsPath,
  packageRoot,
  promptText,
  PROMPT_VARIABLES,
  renderStagePrompt,
  renderTemplate,
  repoPromptsPath,
  stagePrompt,
} from '../../src/config/prompts.js';
import { stageKey } from '../../src/config/resolved.js';

const PLACEHOLDER = /\{[A-Za-z_][A-Za-z0-9_]*\}/g;

let repoRoot: string;
beforeEach(async () => {
  repoRoot = await mkdtemp(join(tmpdir(), 'ratchet-prompts-'));
});
afterEach(async () => {
  await rm(repoRoot, { recursive: true, force: true });
});

async function writeOverride(text: string): Promise<string> {
  await mkdir(join(repoRoot, '.ratchet'), { recursive: true });
  await writeFile(repoPromptsPath(repoRoot), text);
  return repoPromptsPath(repoRoot);
}

async function loadError(): Promise<{
  code: string;
  message: string;
  hint: string | undefined;
}> {
  const error: unknown = await loadPrompts({
    packageRoot: packageRoot(),
    repoRoot,
  }).catch((e: unknown) => e);
  if (!isRatchetError(error)) throw new Error(`expected a RatchetError, got ${String(error)}`);
  return error;
}

describe('packageRoot', () => {
  it('is the directory holding package.json and prompts/prompts.toml', async () => {
    const pkg = JSON.parse(await readFile(join(packageRoot(), 'package.json'), 'utf8')) as { name: string };
    expect(pkg.name).toBe('ratchet');
    await expect(readFile(packagePromptsPath(), 'utf8')).resolves.toContain('[stages.plan]');
  });
});

describe('built-in prompts', () => {
  it('start every stage system prompt with "Stage: <NAME>"', async () => {
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    expect(prompts.files).toEqual([packagePromptsPath()]);
    for (const stage of AGENT_STAGES) {
      expect(stagePrompt(prompts, stage).system.split('\n')[0]).toBe(`Stage: ${stage}`);
    }
  });

  it('leave no placeholder unfilled when rendered with every documented variable', async () => {
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    const vars = Object.fromEntries(Object.keys(PROMPT_VARIABLES).map((name, index) => [name, `value-${index}`]));
    for (const stage of AGENT_STAGES) {
      const { system, user } = renderStagePrompt(prompts, stage, vars);
      expect(system.match(PLACEHOLDER), `${stage} system`).toBeNull();
      expect(user.match(PLACEHOLDER), `${stage} user`).toBeNull();
      expect(user).toContain('value-');
    }
  });

  it('document in each section exactly the placeholders it uses, and every variable in the header', async () => {
    const text = await readFile(packagePromptsPath(), 'utf8');
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    const header = text.slice(0, text.search(/^\[stages\./m));
    for (const name of Object.keys(PROMPT_VARIABLES)) expect(header).toContain(`{${name}}`);
    for (const stage of AGENT_STAGES) {
      const headerAt = text.search(new RegExp(`^\\[stages\\.${stageKey(stage)}\\]`, 'm'));
      const commentStart = text.lastIndexOf('\n\n', headerAt);
      const documented = new Set(text.slice(commentStart, headerAt).match(PLACEHOLDER));
      const { system, user } = stagePrompt(prompts, stage);
      const used = new Set(`${system}\n${user}`.match(PLACEHOLDER));
      expect([...used].sort(), stage).toEqual([...documented].sort());
      for (const name of used) expect(Object.keys(PROMPT_VARIABLES), name).toContain(name.slice(1, -1));
    }
  });

  it('stay focused (20-50 lines per stage) and tell agents not to commit', async () => {
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    for (const stage of AGENT_STAGES) {
      const { system, user } = stagePrompt(prompts, stage);
      const lines = `${system}\n${user}`.trim().split('\n').length;
      expect(lines, stage).toBeGreaterThanOrEqual(20);
      expect(lines, stage).toBeLessThanOrEqual(50);
      expect(system, stage).toContain('Do not run `git commit`');
    }
    expect(stagePrompt(prompts, 'PLAN').system).toContain('{"currentTest": null}');
    expect(stagePrompt(prompts, 'PLAN').system).toContain('test-list.md');
  });
});

describe('renderTemplate', () => {
  it('replaces known names and passes everything else through', () => {
    const template = 'Hi {name}, cycle {cycle} of {unknown}; {"json": {"a": 1}} { name } {}';
    expect(renderTemplate(template, { name: 'Ada', cycle: 3 })).toBe(
      'Hi Ada, cycle 3 of {unknown}; {"json": {"a": 1}} { name } {}',
    );
  });

  it('inserts values verbatim without expanding placeholders inside them', () => {
    expect(renderTemplate('{a} {b}', { a: '{b}', b: '$& $1' })).toBe('{b} $& $1');
  });

  it('ignores inherited properties', () => {
    expect(renderTemplate('{toString} {constructor}', {})).toBe('{toString} {constructor}');
  });
});

describe('.ratchet/prompts.toml overrides', () => {
  it('replace only the keys they set', async () => {
    const base = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    const file = await writeOverride("[stages.red]\nuser = '''\nWrite the test for {current_test}.\n'''\n");
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot });
    expect(prompts.files).toEqual([packagePromptsPath(), file]);
    expect(stagePrompt(prompts, 'RED').user).toBe('Write the test for {current_test}.\n');
    expect(stagePrompt(prompts, 'RED').system).toBe(stagePrompt(base, 'RED').system);
    expect(stagePrompt(prompts, 'GREEN')).toEqual(stagePrompt(base, 'GREEN'));
    expect(promptText(prompts, 'stages.red.user')).toBe('Write the test for {current_test}.\n');
    expect(promptText(prompts, 'stages.red.nothing')).toBeUndefined();
  });

  it('reject unknown keys, naming the file and the line', async () => {
    const file = await writeOverride('[stages.red]\nsytem = "Stage: RED"\n');
    const error = await loadError();
    expect(error.code).toBe('config');
    expect(error.message).toBe(`Unknown prompt key "stages.red.sytem" in ${file} (line 2)`);
  });

  it('reject a system prompt without its Stage line', async () => {
    const file = await writeOverride('[stages.green]\nsystem = "Make it pass."\n');
    const error = await loadError();
    expect(error.message).toContain('"Stage: GREEN"');
    expect(error.message).toContain(file);
  });

  it('reject invalid TOML and non-string values, naming the file', async () => {
    const file = await writeOverride('[stages.red]\nuser = """\n');
    const syntax = await loadError();
    expect(syntax.message).toContain(file);
    expect(syntax.message).toContain('line');
    await writeOverride('[stages.red]\nuser = 3\n');
    const value = await loadError();
    expect(value.message).toContain(file);
    expect(value.message).toBe(`Expected text for prompt key "stages.red.user" in ${file} (line 2)`);
  });
});
