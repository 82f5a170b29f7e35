/**
 * Issue 11, finding 6: `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `GH_PAT`, `NPM_CONFIG__AUTH` and
 * `PGPASSWORD` reached the tests and the agent's Bash, went raw to the provider in GREEN's
 * feedback, and were stored in the ledger and the verify logs; a key in a test description went
 * raw into a commit subject and a note.
 *
 * The built CLI runs `ratchet tdd` with those five set, through the real Anthropic adapter and a
 * hostile scripted model that: writes one of the values into the test list and the test's name
 * (as a model that read it somewhere would), long enough that the commit subject is cut in the
 * middle of it; writes a test that prints `process.env`; and runs `env` in Bash. None of the
 * variables may reach a command (the allowlist; `[bash] env` adds a name), and none of their
 * values may appear in the ledger (every row of every table), the verify logs, the reports, the
 * commit messages, the notes, what the provider received, or the terminal.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  ratchetEnv,
  type CheckoutState,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { assertFreshBuild, describeResult, runCli, type CliResult } from '../support/run-cli.js';
import { bash, say, testListMarkdown, write } from '../support/scripted-brain.js';
import { createStageBrain, type StageBrain } from '../support/stage-brain.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const suffix = `${process.pid}${Math.random().toString(36).slice(2, 10)}`;
/** The five variables of the finding, with values unique to this process. */
const SECRETS: Record<string, string> = {
  GITHUB_TOKEN: `ghp_${`Zq7${suffix}Xw9Kp2Lm4Nn6Rr8Tt0Vv1Yy3`.padEnd(36, 'A').slice(0, 36)}`,
  AWS_SECRET_ACCESS_KEY: `wJalrXUtnFEMI/K7MDENG/bPx${suffix}`.padEnd(40, 'Q').slice(0, 40),
  GH_PAT: `github_pat_11AAQ${suffix}_h4ck3rPatValue0123456789abcdefXYZ`,
  NPM_CONFIG__AUTH: Buffer.from(`npm-user:npm-Pass-${suffix}`).toString('base64'),
  PGPASSWORD: `pg-s3cr3t-${suffix}`,
};
/** Passed on purpose with `[bash] env`: commands see it. */
const PASSED = { RATCHET_SECURITY_PASSED: `passed-on-purpose-${suffix}` };

/** 55 characters, so that `test: <description>` is cut at 72 inside the password. */
const LEAD = 'answers 42 without asking the database, whose pass is ';
const DESCRIPTION = `${LEAD}${SECRETS.PGPASSWORD ?? ''}`;
const TEST_FILE = 'test/answer.test.js';
const IMPL_FILE = 'src/answer.js';

const PROJECT_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'answer', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test/version.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('version', () => {\n  assert.equal(1 + 1, 2);\n});\n",
  '.ratchet/config.toml': '[bash]\nenv = ["RATCHET_SECURITY_PASSED"]\n',
};

/** The RED test: its name holds the password, and it prints the environment it got. */
const RED_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answer } from '../src/answer.js';

console.log('ENV-DUMP ' + JSON.stringify(process.env));

test(${JSON.stringify(DESCRIPTION)}, () => {
  assert.equal(answer(), 42);
});
`;

function hostileScript(): StageBrain {
  const pick = (description: string | null) => ({
    name: 'StructuredOutput' as const,
    input: {
      currentTest: description === null ? null : { description, testFile: TEST_FILE, implFile: IMPL_FILE },
    },
  });
  return createStageBrain([
    {
      stage: 'PLAN',
      turns: [
        say('The test list.', write('test-list.md', testListMarkdown('answer', [DESCRIPTION]))),
        say('Next one.', pick(DESCRIPTION)),
      ],
    },
    {
      stage: 'RED',
      turns: [
        say(
          'A failing test, and a stub.',
          write(TEST_FILE, RED_TEST),
          write(IMPL_FILE, 'export function answer() {\n  return 0;\n}\n'),
        ),
        say('What can my shell see?', bash('env; echo "token=$GITHUB_TOKEN pat=$GH_PAT pg=$PGPASSWORD"')),
      ],
    },
    {
      stage: 'GREEN',
      turns: [
        say(
          `The answer. (I know ${SECRETS.GITHUB_TOKEN ?? ''})`,
          write(IMPL_FILE, 'export function answer() {\n  return 42;\n}\n'),
        ),
      ],
    },
    { stage: 'REFACTOR', turns: [say(`Nothing to change. AWS says ${SECRETS.AWS_SECRET_ACCESS_KEY ?? ''}`)] },
    { stage: 'PLAN', turns: [say('All done.', pick(null))] },
  ]);
}

/** Every text value of every row of every table of the database, read back through SQLite. */
function allRows(file: string): string {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = db.prepare<[], { name: string }>("select name from sqlite_master where type = 'table'").all();
    return tables
      .flatMap(({ name }) => db.prepare(`select * from "${name}"`).all())
      .map((row) => JSON.stringify(row))
      .join('\n');
  } finally {
    db.close();
  }
}

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): Array<{ path: string; text: string }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, text: readFileSync(path, 'utf8') };
    });
}

/** The names of the five secrets' values found in `text`, plus any `NAME=` assignment of theirs. */
function leaks(text: string): string[] {
  return Object.entries(SECRETS).flatMap(([name, value]) => [
    ...(text.includes(value) ? [`${name}'s value`] : []),
    // Its first 8 characters: no half of a key either.
    ...(text.includes(value.slice(0, 8)) && !text.includes(value) ? [`the start of ${name}'s value`] : []),
  ]);
}

/** The allowlist keeps the variables from commands, sandboxed or not: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();

describe(`secrets never leak (issue 11, finding 6)${sandbox.note}`, () => {
  let repo: ProjectRepo;
  let server: FakeAnthropicServer;
  let brain: StageBrain;
  let before: CheckoutState;
  let run: CliResult;
  let runId: string;
  const outputs: CliResult[] = [];
  const env = (): Record<string, string> => ({ ...ratchetEnv(repo, server), ...SECRETS, ...PASSED });

  beforeAll(async () => {
    assertFreshBuild();
    repo = await createProjectRepo(sandbox.files(PROJECT_FILES));
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    brain = hostileScript();
    server.setFallback((request) => brain.reply(request));
    before = checkoutState(repo);
    run = await runCli(['tdd', 'An answer module', ...ANTHROPIC_FLAGS, '--json'], { cwd: repo.dir, env: env() });
    runId = /"runId":"([^"]+)"/.exec(run.stdout)?.[1] ?? '(none)';
    for (const args of [
      ['status', runId],
      ['history', runId],
      ['report', runId],
      ['status', runId, '--json'],
    ])
      outputs.push(await runCli(args, { cwd: repo.dir, env: env() }));
  }, 180_000);

  afterAll(async () => {
    await (server as FakeAnthropicServer | undefined)?.close();
    await (repo as ProjectRepo | undefined)?.cleanup();
  });

  it('runs the hostile script to the end, and leaves the checkout alone', () => {
    expect(brain.unexpected).toEqual([]);
    expect(run.exitCode, describeResult(run)).toBe(0);
    expect(brain.unplayed()).toEqual([]);
    expect(checkoutState(repo)).toEqual(before);
  });

  it("gives the agent's Bash none of the variables, but PATH and what [bash] env passes", () => {
    const shell = brain.toolResults.find((result) => result.tool === 'Bash')?.output ?? '(no Bash result)';
    const seen = [...Object.keys(SECRETS), 'ANTHROPIC_API_KEY'].filter((name) => shell.includes(`${name}=`));
    expect(seen).toEqual([]);
    expect(shell).toContain('token= pat= pg=');
    expect(shell).toMatch(/^PATH=/m);
    expect(shell).toContain(`RATCHET_SECURITY_PASSED=${PASSED.RATCHET_SECURITY_PASSED}`);
  });

  it('gives the test commands none of them either', () => {
    const logs = filesUnder(join(repo.dir, '.ratchet', 'runs', runId, 'verify'));
    const dumps = logs.flatMap(({ text }) => text.split('\n').filter((line) => line.includes('ENV-DUMP {')));
    expect(dumps.length).toBeGreaterThan(0);
    for (const dump of dumps) {
      const seen = [...Object.keys(SECRETS), 'ANTHROPIC_API_KEY'].filter((name) => dump.includes(`"${name}"`));
      expect(seen).toEqual([]);
      expect(
        dump.includes('"PATH"') && dump.includes('"RATCHET_SECURITY_PASSED"'),
        'PATH and the passed variable',
      ).toBe(true);
    }
  });

  it('stores no value in any row of the ledger', () => {
    expect(leaks(allRows(join(repo.dir, '.ratchet', 'ledger.db')))).toEqual([]);
  });

  it('keeps no value in the verify logs or the reports', () => {
    const files = filesUnder(join(repo.dir, '.ratchet', 'runs', runId));
    expect(files.some(({ path }) => path.endsWith('report.md'))).toBe(true);
    expect(files.some(({ path }) => path.endsWith('report.html'))).toBe(true);
    for (const { path, text } of files) expect(leaks(text), path).toEqual([]);
  });

  it('writes no value into a commit message or a handoff note, cut or whole', () => {
    const messages = repo.run('log', '--format=%B', `${before.head}..ratchet/${runId}`);
    expect(messages).toContain(`test: ${LEAD}[REDACTED]`);
    expect(leaks(messages)).toEqual([]);
    const notes = repo
      .run('log', '--format=%H', `${before.head}..ratchet/${runId}`)
      .split('\n')
      .map((sha) => repo.run('notes', '--ref=refs/notes/tdd-handoffs', 'show', sha))
      .join('\n');
    expect(notes).toContain('[REDACTED]');
    expect(leaks(notes)).toEqual([]);
  });

  it('sends no value to the provider, although the model wrote them and the tests printed them', () => {
    const bodies = JSON.stringify(server.requests.map((request) => request.body));
    expect(bodies.includes('[REDACTED]'), 'the requests quote the values, redacted').toBe(true);
    expect(leaks(bodies)).toEqual([]);
  });

  it('prints no value on the terminal', () => {
    for (const result of [run, ...outputs]) {
      expect(leaks(result.stdout), result.stdout.slice(0, 500)).toEqual([]);
      expect(leaks(result.stderr)).toEqual([]);
    }
  });
});
