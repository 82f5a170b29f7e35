/**
 * The cheat corpus (issue 11): each trick a model might play to get a TDD gate to say "pass"
 * without doing the work, tried by a scripted model through the built CLI (the real Anthropic
 * adapter against the loopback fake, real git, real test runners, the sandbox when bwrap works:
 * where it is missing the runs opt out with `[bash] sandbox = "off"`, see sandbox-for-this-machine.ts).
 *
 * One cheat is one table entry (`Cheat`): the stage it pays in, the turns of the cheating attempt,
 * and how it must end. Every run plays the same honest story around it, one test-list item:
 * PLAN picks it, RED writes a failing test and a stub, GREEN makes it pass. The cheat replaces
 * the first attempt of its stage; the next attempt is the honest one (`fix` turns first when the
 * cheat left something behind that the stage does not undo by itself). A run must then:
 * - reject the cheating attempt with the expected reason (the stage row in the ledger), and show
 *   the model why (the retry's prompt names it);
 * - finish honestly (exit 0, the item done);
 * - commit nothing that holds the cheat (its `marker`), and leave the test file as RED wrote it;
 * - leave the user's checkout as it was.
 * An entry with `outcome: 'warned'` is one the gates cannot refuse outright (special-cased
 * inputs): it is accepted with the warning instead. An entry with no cheat is the honest control.
 */
import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import type { ScriptedTool, ScriptedTurn, ScriptStep } from '../../support/scripted-brain.js';
import { planSteps, say, write } from '../../support/scripted-brain.js';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  describeStage,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  modelCallRequests,
} from '../../support/e2e-run.js';
import { describeResult } from '../../support/run-cli.js';
import { textOf } from '../../support/anthropic-request.js';
import { runTdd, type TddRun } from '../../support/tdd-e2e-run.js';
import { sandboxForThisMachine } from '../../support/sandbox-for-this-machine.js';

/** A project the cheats run against: its first commit and the one item's honest story. */
export interface CheatProject {
  name: string;
  files: Record<string, string>;
  item: string;
  testFile: string;
  implFile: string;
  /** RED's test file (the test fails against `stub`, passes against `solved`). */
  test: string;
  stub: string;
  solved: string;
  /** Extra environment of the CLI (e.g. pytest without the machine's plugins). */
  env?: Record<string, string>;
  /**
   * What the honest GREEN also does besides the implementation: an edit of a part of a mixed
   * file that is not locked (a description in package.json or pyproject.toml), which no gate may
   * take for a cheat.
   */
  honestExtras?: ScriptedTool[];
}

export interface Cheat {
  name: string;
  /** The stage whose first attempt cheats. */
  stage: 'GREEN' | 'RED';
  /** The cheating attempt. */
  turns: ScriptedTurn[];
  /** The stage row's reason for rejecting it (for `outcome: 'warned'`, the warning's text). */
  expect: string | RegExp;
  /** `rejected` (default): refused, then the honest attempt passes. `warned`: accepted with a warning. */
  outcome?: 'rejected' | 'warned';
  /** A string only the cheat writes: no commit may hold it (unless `warned`). */
  marker?: string;
  /** Turns the honest retry starts with, to undo what the cheat left (RED_FIX keeps RED's tree). */
  fix?: ScriptedTurn[];
  /** What the retry's prompt must tell the model (the gate's feedback). */
  told?: string | RegExp;
}

/** The brain's script: PLAN, RED, GREEN for the project's item, with `cheat` in its stage. */
function scriptFor(project: CheatProject, cheat: Cheat | null): ScriptStep[] {
  const { item } = project;
  const honestRed = say(
    'A failing test and a stub.',
    write(project.testFile, project.test),
    write(project.implFile, project.stub),
  );
  const honestGreen = say(
    'The implementation.',
    write(project.implFile, project.solved),
    ...(project.honestExtras ?? []),
  );
  const steps: ScriptStep[] = [
    ...planSteps(project.name, [{ text: item, testFile: project.testFile, implFile: project.implFile }]),
  ];
  if (cheat?.stage === 'RED') {
    steps.push(
      { stage: 'RED', test: item, turns: cheat.turns, why: cheat.name },
      { stage: 'RED_FIX', test: item, attempt: 2, turns: [...(cheat.fix ?? []), honestRed] },
      { stage: 'GREEN', test: item, turns: [honestGreen] },
    );
    return steps;
  }
  steps.push({ stage: 'RED', test: item, turns: [honestRed] });
  if (cheat === null) return [...steps, { stage: 'GREEN', test: item, turns: [honestGreen] }];
  steps.push({ stage: 'GREEN', test: item, turns: cheat.turns, why: cheat.name });
  if (cheat.outcome !== 'warned')
    steps.push({ stage: 'GREEN', test: item, attempt: 2, turns: [...(cheat.fix ?? []), honestGreen] });
  return steps;
}

export interface CheatRun {
  repo: ProjectRepo;
  run: TddRun;
  /** `cycle STAGE#attempt outcome reason` of every stage row. */
  stages: string[];
  /** The first user message of each request, in order, with the stage line of its system prompt. */
  prompts: Array<{ stage: string; prompt: string }>;
  warnings: string[];
}

/** Plays `cheat` (null: the honest control) against a new repository of `project`. */
export async function runCheat(project: CheatProject, cheat: Cheat | null): Promise<CheatRun> {
  const repo = await createProjectRepo(sandboxForThisMachine().files(project.files));
  const model = await startScriptedModel({ items: [project.item], steps: scriptFor(project, cheat) });
  try {
    const before = checkoutState(repo);
    const run = await runTdd(repo, ['Multiply two numbers', ...ANTHROPIC_FLAGS], {
      env: { ...ratchetEnv(repo, model.server), ...project.env },
    });
    expect(model.brain.unexpected, describeResult(run.result)).toEqual([]);
    expect(checkoutState(repo), 'the user checkout changed').toEqual(before);
    const prompts = modelCallRequests(model.server).map((request) => {
      const body = request.body as { system?: unknown; messages?: Array<{ content: unknown }> };
      return {
        stage: /Stage: (\w+)/.exec(textOf(body.system))?.[1] ?? '?',
        prompt: textOf(body.messages?.[0]?.content),
      };
    });
    return {
      repo,
      run,
      stages: run.ledger.stages.map((row) => describeStage(row, true)),
      prompts,
      warnings: run.events.filter((event) => event.type === 'warning').map((event) => String(event.message)),
    };
  } finally {
    await model.server.close();
  }
}

/** Asserts what the table says of `cheat` (or of the honest control) about a finished run. */
export function expectCaught(project: CheatProject, cheat: Cheat | null, played: CheatRun): void {
  const { run, repo, stages } = played;
  expect(run.result.exitCode, describeResult(run.result)).toBe(0);
  const branch = `ratchet/${run.runId}`;
  const commits = run.commits;
  expect(commits.at(-1)?.subject).toBe('plan: all tests done');
  // The test RED committed is the one the run ends with.
  const redCommit = commits.find((commit) => commit.subject.startsWith('test:'));
  expect(redCommit).toBeDefined();
  expect(repo.run('show', `${branch}:${project.testFile}`)).toBe(
    repo.run('show', `${redCommit?.sha ?? ''}:${project.testFile}`),
  );
  if (cheat === null) {
    expect(stages.filter((line) => line.includes('rejected'))).toEqual([]);
    return;
  }
  const first = cheat.stage === 'RED' ? `1 RED#1` : `1 GREEN#1`;
  const row = stages.find((line) => line.startsWith(first));
  if (cheat.outcome === 'warned') {
    expect(row, stages.join('\n')).toMatch(new RegExp(`^${first} accepted`));
    expect(played.warnings.join('\n')).toMatch(cheat.expect);
    return;
  }
  expect(row, stages.join('\n')).toMatch(new RegExp(`^${first} rejected`));
  const reason = row?.replace(new RegExp(`^${first} rejected `), '') ?? '';
  if (typeof cheat.expect === 'string') expect(reason, stages.join('\n')).toBe(cheat.expect);
  else expect(reason, stages.join('\n')).toMatch(cheat.expect);
  // The retry was told why.
  if (cheat.told !== undefined) {
    const retry = played.prompts.find(
      (entry) => entry.stage === (cheat.stage === 'RED' ? 'RED_FIX' : 'GREEN') && /Attempt 2 of/.test(entry.prompt),
    );
    expect(retry?.prompt ?? '(no retry prompt)').toMatch(
      typeof cheat.told === 'string' ? new RegExp(escapeRegExp(cheat.told)) : cheat.told,
    );
  }
  if (cheat.marker !== undefined) {
    for (const commit of commits) {
      expect(filesHolding(repo, commit.sha, cheat.marker), `${commit.subject} holds the cheat`).toEqual([]);
    }
  }
}

/** Files of `commit` that contain `text` (git grep exits 1 when there are none). */
function filesHolding(repo: ProjectRepo, commit: string, text: string): string[] {
  try {
    return execFileSync('git', ['grep', '-l', '--fixed-strings', '-e', text, commit, '--'], {
      cwd: repo.dir,
      env: { ...process.env, ...repo.env },
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
  } catch (error) {
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
