import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/core/events.js';
import type { ModelRequest } from '../../src/core/model.js';
import type { TestRunResult } from '../../src/core/verification.js';
import { loadPrompts, packageRoot } from '../../src/config/prompts.js';
import { buildIndex } from '../../src/code/index/build-index.js';
import type { TokenBudget } from '../../src/context/prompt-budget.js';
import { lockVerification } from '../../src/verify/verification-files.js';
import { createSolveGitWorkspace } from '../../src/workflows/solve/git-workspace.js';
import type { SolveDependencies, SolvePolicy, SolveVerifier } from '../../src/workflows/solve/ports.js';
import { solvePrompts } from '../../src/workflows/solve/prompts.js';
import { runSolve, type SolveResult } from '../../src/workflows/solve/workflow.js';
import { FakeModelClient, text, type FakeStep } from '../support/fake-model-client.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

/**
 * The solve workflow over its ports (real git in a temporary repository, the real index and
 * retrieval, a scripted model, and a verifier whose tests fail when an edit wrote SYNTAX-ERROR):
 * what the seed's orchestrator must do beyond the happy path of the e2e.
 */

const FILES = {
  'src/a.js': 'export function a() {\n  return "BROKEN";\n}\n',
  'src/b.js': 'export function b() {\n  return 1;\n}\n',
};

const META = JSON.stringify({
  taskSummary: 'fix a, extend b',
  parts: [{ id: 'p1', description: 'fix a and extend b', affectedFiles: ['src/a.js', 'src/b.js'], dependsOn: [] }],
});
const STEP_A = { id: 's1', description: 'fix a', targetFiles: ['src/a.js'], targetSymbols: ['a'], dependsOn: [] };
const STEP_B = { id: 's2', description: 'extend b', targetFiles: ['src/b.js'], targetSymbols: ['b'], dependsOn: [] };
const PART = JSON.stringify({ partId: 'p1', taskSummary: 'a then b', steps: [STEP_A, STEP_B] });

const FIX_A =
  '<edit file="src/a.js"><search>\n  return "BROKEN";\n</search><replacement>\n  return "FIXED";\n</replacement></edit>';
const ADD_B =
  '<edit file="src/b.js"><search>\n  return 1;\n</search><replacement>\n  return 1; // ADDED\n</replacement></edit>';
const MISSING =
  '<edit file="src/a.js"><search>\n  return "NOT THERE";\n</search><replacement>\nx\n</replacement></edit>';

function stageOf(request: ModelRequest): string {
  return request.system.split('\n')[0] ?? '';
}

function userOf(request: ModelRequest): string {
  const message = request.messages[0];
  return message?.role === 'user' ? message.content : '';
}

/** One test per file: it fails when the file holds SYNTAX-ERROR (an edit that broke it). */
function verifierOver(root: string): SolveVerifier & { runs: number } {
  const verifier = {
    testCommand: 'fake-test',
    runs: 0,
    async runTests() {
      verifier.runs++;
      const tests = await Promise.all(
        ['src/a.js', 'src/b.js'].map(async (file) => {
          const broken = (await readFile(join(root, file), 'utf8')).includes('SYNTAX-ERROR');
          return {
            id: `${file}::loads`,
            name: 'loads',
            file,
            status: broken ? ('failed' as const) : ('passed' as const),
            ...(broken ? { failureKind: 'assertion' as const, message: `${file} does not load` } : {}),
          };
        }),
      );
      const failed = tests.filter((test) => test.status === 'failed').length;
      const result: TestRunResult = {
        command: 'fake-test',
        exitCode: failed === 0 ? 0 : 1,
        timedOut: false,
        durationMs: 1,
        output: '',
        tests,
        collectionErrors: [],
        source: 'junit-xml',
        counts: { passed: tests.length - failed, failed, skipped: 0, total: tests.length },
      };
      return { result, outputFile: null };
    },
    runChecks: () => Promise.resolve([]),
    lockVerification: () => lockVerification(root, ['fake-test']),
  };
  return verifier;
}

interface Harness {
  repo: TempRepo;
  model: FakeModelClient;
  deps: SolveDependencies;
  policy: SolvePolicy;
  verifier: ReturnType<typeof verifierOver>;
}

async function harness(
  script: (request: ModelRequest, index: number) => FakeStep,
  budget?: TokenBudget,
): Promise<Harness> {
  const repo = await createTempRepo({ files: FILES });
  const model = new FakeModelClient((request, index) => script(request, index));
  const verifier = verifierOver(repo.dir);
  const prompts = solvePrompts(await loadPrompts({ packageRoot: packageRoot(), repoRoot: repo.dir }));
  const deps: SolveDependencies = {
    workspace: createSolveGitWorkspace(repo.dir, repo.git),
    verifier,
    models: {
      client: () => model,
      budget: () => budget ?? { contextWindow: 32_768, reservedTokens: 4096 },
      maxOutputTokens: () => 1024,
    },
    prompts,
    index: () => buildIndex({ root: repo.dir, cacheDir: repo.path('index-cache'), excludes: [], git: repo.git }),
  };
  const policy: SolvePolicy = {
    task: 'fix a and extend b',
    runId: 'run-1',
    baseCommit: repo.run('rev-parse', 'HEAD'),
    stages: ['scope'],
    maxRetriesPerStep: 1,
    maxFullFiles: 3,
  };
  return { repo, model, deps, policy, verifier };
}

async function drive(h: Harness): Promise<{ events: EventInput[]; result: SolveResult }> {
  const events: EventInput[] = [];
  const steps = runSolve(h.policy, h.deps, null);
  for (;;) {
    const next = await steps.next();
    if (next.done) return { events, result: next.value };
    events.push(next.value);
  }
}

/** The usual answers, with `implement` deciding the IMPLEMENT ones. */
function script(implement: (user: string) => string, adjustment?: (user: string, index: number) => string) {
  return (request: ModelRequest, index: number): FakeStep => {
    const user = userOf(request);
    switch (stageOf(request)) {
      case 'Stage: META_PLAN':
        return text(META);
      case 'Stage: PART_PLAN':
        return text(PART);
      case 'Stage: IMPLEMENT':
        return text(implement(user));
      case 'Stage: ADJUSTMENT': {
        if (adjustment) return text(adjustment(user, index));
        const remaining = user.includes('"id": "s2"') ? [STEP_B] : [];
        return text(JSON.stringify({ revisedSteps: remaining, rationale: 'fine' }));
      }
      default:
        return new Error(`unexpected ${stageOf(request)}`);
    }
  };
}

let current: Harness | undefined;

beforeEach(() => {
  current = undefined;
});

afterEach(async () => {
  await current?.repo.cleanup();
});

describe('runSolve', () => {
  it('goes on after a step that fails all its attempts, and ends partial with that step undone', async () => {
    current = await harness(script((user) => (user.includes('Step to implement:\ns1') ? MISSING : ADD_B)));
    const { events, result } = await drive(current);
    expect(result.status).toBe('partial');
    expect(result.progress.steps.map((step) => `${step.stepId} ${step.outcome} ${step.attempts}`)).toEqual([
      's1 failed 2',
      's2 done 1',
    ]);
    // The retry was sent the first attempt's failure, naming the edit and why.
    const implementS1 = current.model.requests.filter(
      (request) => stageOf(request) === 'Stage: IMPLEMENT' && userOf(request).includes('Step to implement:\ns1'),
    );
    expect(implementS1).toHaveLength(2);
    expect(userOf(implementS1[1] as ModelRequest)).toContain('Edit 1 (src/a.js): SEARCH matches 0 times in src/a.js');
    // An edit that never applied is never tested: only s2's ran the tests.
    expect(current.verifier.runs).toBe(1);
    expect(await readFile(join(current.repo.dir, 'src/a.js'), 'utf8')).toBe(FILES['src/a.js']);
    const subjects = events.filter((event) => event.type === 'checkpoint-create').map((event) => event.subject);
    expect(subjects).toContain('chore: step s1 failed; its changes were undone');
  });

  /** A harness whose PRECISION stage answers `grades`, the two steps fixing a.js and adding b.js. */
  async function gradedBy(grades: Array<{ path: string; relevance: number }>): Promise<Harness> {
    const base = script((user) => (user.includes('Step to implement:\ns1') ? FIX_A : ADD_B));
    const graded = await harness((request, index) =>
      stageOf(request) === 'Stage: PRECISION' ? text(JSON.stringify({ grades })) : base(request, index),
    );
    graded.policy = { ...graded.policy, stages: ['scope', 'precision'] };
    return graded;
  }

  it('ranks by scope, with a warning, when the precision grades name none of the candidates (paths without src/)', async () => {
    current = await gradedBy([
      { path: 'a.js', relevance: 3 },
      { path: 'b.js', relevance: 2 },
    ]);
    const { events, result } = await drive(current);
    expect(result.status).toBe('complete');
    const warnings = events.flatMap((event) => (event.type === 'warning' ? [event.message] : []));
    expect(warnings[0]).toMatch(/^The precision grades name none of the \d+ candidate files \(a\.js, b\.js\)/);
    // The files reached the passes all the same: the first IMPLEMENT saw src/a.js whole.
    const implement = current.model.requests.find((request) => stageOf(request) === 'Stage: IMPLEMENT');
    expect(userOf(implement as ModelRequest)).toContain('return "BROKEN";');
  });

  it('takes grades written with a leading ./ as the candidates they name', async () => {
    current = await gradedBy([
      { path: './src/a.js', relevance: 3 },
      { path: './src/b.js', relevance: 3 },
    ]);
    const { events } = await drive(current);
    expect(events.filter((event) => event.type === 'warning')).toEqual([]);
    const implement = current.model.requests.find((request) => stageOf(request) === 'Stage: IMPLEMENT');
    expect(userOf(implement as ModelRequest)).toContain('return "BROKEN";');
  });

  it('applies the edits of a step all or none: a second edit that does not match leaves the first unapplied', async () => {
    current = await harness(
      script((user) => (user.includes('Step to implement:\ns1') ? `${FIX_A}\n${MISSING}` : ADD_B)),
    );
    const { events } = await drive(current);
    const s1 = events.filter((event) => event.type === 'solve-attempt-end' && event.stepId === 's1');
    expect(s1.map((event) => event.type === 'solve-attempt-end' && event.patchApplied)).toEqual([false, false]);
    const error = s1[0]?.type === 'solve-attempt-end' ? s1[0].error : null;
    expect(error).toContain('Edit 2 (src/a.js)');
    expect(await readFile(join(current.repo.dir, 'src/a.js'), 'utf8')).toBe(FILES['src/a.js']);
  });

  it('sends back an adjustment that revises a step that already ran, and takes the corrected one', async () => {
    let adjustments = 0;
    current = await harness(
      script(
        (user) => (user.includes('Step to implement:\ns1') ? FIX_A : ADD_B),
        (user) => {
          adjustments++;
          if (adjustments === 1) return JSON.stringify({ revisedSteps: [STEP_A, STEP_B], rationale: 'redo a' });
          return JSON.stringify({ revisedSteps: user.includes('"id": "s2"') ? [STEP_B] : [], rationale: 'ok' });
        },
      ),
    );
    const { result } = await drive(current);
    expect(result.status).toBe('complete');
    const adjustmentRequests = current.model.requests.filter((request) => stageOf(request) === 'Stage: ADJUSTMENT');
    expect(userOf(adjustmentRequests[1] as ModelRequest)).toContain('Your previous answer could not be used');
    expect(userOf(adjustmentRequests[1] as ModelRequest)).toContain('s1');
    expect(result.progress.steps.map((step) => step.stepId)).toEqual(['s1', 's2']);
  });

  it('undoes an attempt whose tests fail and retries it with the failing tests', async () => {
    const BREAK_A = FIX_A.replace('"FIXED"', '"FIXED" SYNTAX-ERROR');
    current = await harness(
      script((user) => {
        if (!user.includes('Step to implement:\ns1')) return ADD_B;
        return user.includes('Attempt 1:') ? FIX_A : BREAK_A;
      }),
    );
    const { result } = await drive(current);
    expect(result.status).toBe('complete');
    const retry = current.model.requests.filter(
      (request) => stageOf(request) === 'Stage: IMPLEMENT' && userOf(request).includes('Step to implement:\ns1'),
    )[1];
    expect(userOf(retry as ModelRequest)).toContain('the tests fail, so they were undone');
    expect(userOf(retry as ModelRequest)).toContain('src/a.js::loads');
    expect(current.verifier.runs).toBe(3);
    expect(await readFile(join(current.repo.dir, 'src/a.js'), 'utf8')).toContain('"FIXED";');
  });

  it('fails a pass whose prompt exceeds the window before any model call', async () => {
    current = await harness(
      script(() => FIX_A),
      { contextWindow: 400, reservedTokens: 200 },
    );
    const { events, result } = await drive(current);
    expect(current.model.callCount).toBe(0);
    expect(result.status).toBe('failed');
    const warning = events.find((event) => event.type === 'warning');
    expect(warning?.type === 'warning' ? warning.message : '').toContain('no call was made');
  });
});
