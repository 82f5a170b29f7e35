import { RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import type { HandoffState, TestCase } from '../../src/core/handoff.js';
import type { AgentStageName } from '../../src/core/stages.js';
import type { Step } from '../../src/workflows/tdd/context.js';
import type { TddDependencies, TddPolicy } from '../../src/workflows/tdd/ports.js';
import type { TestReviewPort } from '../../src/workflows/tdd/test-review.js';
import { initialHandoff, runTdd, type TddResult } from '../../src/workflows/tdd/workflow.js';
import { FakeAgent, FakeRefactorCheck, fakePrompt, type AgentScript, type AgentTurn } from './fake-tdd-ports.js';
import { FakeVerifier, testFile, type FakeCheck } from './fake-tdd-verifier.js';
import { FakeWorkspace } from './fake-tdd-workspace.js';

/*
 * A TDD workflow wired to the fakes (fake-tdd-workspace, -verifier, -ports), with a small calculator feature
 * (two items: add, subtract) and turn builders for each stage.
 */

export const RUN_ID = 'run-fake-1';
export const LIST = 'test-list.md';

export const ADD: TestCase = { description: 'adds two numbers', testFile: 'src/add.test.ts', implFile: 'src/add.ts' };
export const SUB: TestCase = {
  description: 'subtracts two numbers',
  testFile: 'src/sub.test.ts',
  implFile: 'src/sub.ts',
};

export const LIST_TEXT = `# Calculator\n\n- [ ] ${ADD.description}\n- [ ] ${SUB.description}\n`;
export const LIST_ADD_DONE = `# Calculator\n\n- [x] ${ADD.description}\n- [ ] ${SUB.description}\n`;
export const LIST_ALL_DONE = `# Calculator\n\n- [x] ${ADD.description}\n- [x] ${SUB.description}\n`;

/** What each test's implementation must contain to pass. */
const SOLUTION: Record<string, { name: string; stub: string; solved: string; needle: string }> = {
  [ADD.implFile]: {
    name: 'add',
    stub: 'export function add(a: number, b: number): number {\n  return 0;\n}\n',
    solved: 'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
    needle: 'return a + b',
  },
  [SUB.implFile]: {
    name: 'sub',
    stub: 'export function sub(a: number, b: number): number {\n  return 0;\n}\n',
    solved: 'export function sub(a: number, b: number): number {\n  return a - b;\n}\n',
    needle: 'return a - b',
  },
};

function solutionOf(test: TestCase): { name: string; stub: string; solved: string; needle: string } {
  const solution = SOLUTION[test.implFile];
  if (solution === undefined) throw new Error(`no solution for ${test.implFile}`);
  return solution;
}

/** PLAN: writes the list (unless `list` is null: left as it is) and answers with `test`. */
export function planTurn(test: TestCase | null, list: string | null = LIST_TEXT): AgentTurn {
  return { ...(list === null ? {} : { write: { [LIST]: list } }), output: { currentTest: test } };
}

/** The test file RED writes for `test`: one test that passes once the implementation is solved. */
export function redTestFile(test: TestCase): string {
  const solution = solutionOf(test);
  return testFile({ name: test.description, impl: test.implFile, contains: solution.needle });
}

/** RED: the test plus a stub implementation, so it fails by assertion. */
export function redTurn(test: TestCase): AgentTurn {
  return { write: { [test.testFile]: redTestFile(test), [test.implFile]: solutionOf(test).stub } };
}

/** GREEN (or FIX): the solved implementation, plus anything in `extra`. */
export function greenTurn(test: TestCase, extra = ''): AgentTurn {
  return { write: { [test.implFile]: solutionOf(test).solved + extra } };
}

export function solvedImpl(test: TestCase): string {
  return solutionOf(test).solved;
}

export function stubImpl(test: TestCase): string {
  return solutionOf(test).stub;
}

/** A refactoring that keeps the tests passing. */
export function goodRefactorTurn(test: TestCase): AgentTurn {
  return { write: { [test.implFile]: `// refactored\n${solutionOf(test).solved}` } };
}

/** A refactoring that breaks the test. */
export function breakingRefactorTurn(test: TestCase): AgentTurn {
  return { write: { [test.implFile]: solutionOf(test).stub.replace('return 0', 'return NaN') } };
}

/** Two cycles (add, subtract) and the final PLAN, every stage accepted on its first attempt. */
export function happyScript(options: { refactor?: boolean } = {}): AgentScript {
  const refactor = options.refactor ?? true;
  return {
    PLAN: [planTurn(ADD), planTurn(SUB, null), planTurn(null, null)],
    RED: [redTurn(ADD), redTurn(SUB)],
    GREEN: [greenTurn(ADD), greenTurn(SUB)],
    ...(refactor ? { REFACTOR: [{}, {}] } : {}),
  };
}

/** A test list holding only ADD. */
export const ADD_ONLY_LIST = `- [ ] ${ADD.description}\n`;

/**
 * One cycle over ADD_ONLY_LIST (already committed: PLAN does not write it), then the final
 * PLAN; `overrides` replace whole stages' turns.
 */
export function cycleScript(overrides: AgentScript = {}): AgentScript {
  return {
    PLAN: [planTurn(ADD, null), planTurn(null, null)],
    RED: [redTurn(ADD)],
    GREEN: [greenTurn(ADD)],
    REFACTOR: [{}],
    ...overrides,
  };
}

/** The initial files for `cycleScript`. */
export function addOnlyFiles(extra: Record<string, string> = {}): Record<string, string> {
  return { 'README.md': '# calculator\n', [LIST]: ADD_ONLY_LIST, ...extra };
}

export interface PolicyOptions {
  refactor?: TddPolicy['refactor'];
  /** Per-stage agent time limit (default 60 s). */
  timeoutMs?: number;
  maxAttempts?: Partial<Record<AgentStageName, number>>;
  testGlobs?: string[];
  /** The task's files, as in a tasks run (PLAN must name them). */
  taskFiles?: TddPolicy['taskFiles'];
}

export function fakePolicy(baseCommit: string, options: PolicyOptions = {}): TddPolicy {
  return {
    feature: 'a calculator',
    refactor: options.refactor ?? 'always',
    testGlobs: options.testGlobs ?? ['**/*.test.ts'],
    bashTimeoutMs: 5_000,
    stage: (stage) => ({
      maxAttempts: options.maxAttempts?.[stage] ?? 3,
      maxTurns: 7,
      timeoutMs: options.timeoutMs ?? 60_000,
    }),
    runId: RUN_ID,
    baseCommit,
    ...(options.taskFiles === undefined ? {} : { taskFiles: options.taskFiles }),
  };
}

export interface HarnessOptions extends PolicyOptions {
  files?: Record<string, string>;
  script: AgentScript;
  checks?: readonly FakeCheck[];
  /** Line limit of the fake refactor checker (default 10). */
  maxLines?: number;
  /** The static review of test quality after RED (default: none, the review is off). */
  testReview?: TestReviewPort;
}

export interface Harness {
  workspace: FakeWorkspace;
  verifier: FakeVerifier;
  agent: FakeAgent;
  refactorCheck: FakeRefactorCheck;
  deps: TddDependencies;
  policy: TddPolicy;
  /** Agent stages that `agentFor` was asked for, in order. */
  agentRequests: AgentStageName[];
  /** Runs the workflow from `start` (default: a fresh run) to its end. */
  run(start?: HandoffState, signal?: AbortSignal): Promise<Driven>;
  dispose(): Promise<void>;
}

export async function createHarness(options: HarnessOptions): Promise<Harness> {
  const workspace = await FakeWorkspace.create(options.files ?? { 'README.md': '# calculator\n' });
  const verifier = new FakeVerifier(workspace, options.checks === undefined ? {} : { checks: options.checks });
  const agent = new FakeAgent(workspace, options.script);
  const refactorCheck = new FakeRefactorCheck(workspace, options.maxLines ?? 10);
  const agentRequests: AgentStageName[] = [];
  const deps: TddDependencies = {
    workspace,
    verifier,
    agentFor(stage) {
      agentRequests.push(stage);
      return agent;
    },
    prompt: fakePrompt,
    refactorCheck: refactorCheck.check,
    ...(options.testReview === undefined ? {} : { testReview: options.testReview }),
  };
  const policy = fakePolicy(await workspace.head(), options);
  return {
    workspace,
    verifier,
    agent,
    refactorCheck,
    deps,
    policy,
    agentRequests,
    run: (start = initialHandoff(RUN_ID), signal) => drive(runTdd(policy, deps, start, signal)),
    dispose: () => workspace.dispose(),
  };
}

export interface Driven {
  events: EventInput[];
  result: TddResult | undefined;
  error: RatchetError | undefined;
}

/** Drains a workflow, keeping its events and its result or its (Ratchet) error. */
export async function drive(steps: Step<TddResult>): Promise<Driven> {
  const events: EventInput[] = [];
  try {
    for (;;) {
      const next = await steps.next();
      if (next.done === true) return { events, result: next.value, error: undefined };
      events.push(next.value);
    }
  } catch (error) {
    if (error instanceof RatchetError) return { events, result: undefined, error };
    throw error;
  }
}

/** One line per event, leaving out agent tool calls and model traffic. */
export function trace(events: readonly EventInput[]): string[] {
  const lines: string[] = [];
  for (const event of events) {
    switch (event.type) {
      case 'cycle-start':
        lines.push(`cycle-start ${event.cycle}`);
        break;
      case 'stage-start':
        lines.push(`stage-start ${event.stage}#${event.attempt}`);
        break;
      case 'stage-end':
        lines.push(
          `stage-end ${event.stage}#${event.attempt} ${event.outcome}${event.reason === undefined ? '' : ` (${event.reason.split(':')[0] ?? ''})`}`,
        );
        break;
      case 'verify-end':
        lines.push(`verify-end ${event.stage} ${event.kind}`);
        break;
      case 'checkpoint-create':
        lines.push(`checkpoint-create ${event.subject}`);
        break;
      case 'checkpoint-rollback':
        lines.push(`checkpoint-rollback ${event.reason}`);
        break;
      case 'note-write':
        lines.push(
          `note-write ${event.state.phase}->${event.state.nextPhase ?? 'null'}${event.state.error === null ? '' : ' error'}`,
        );
        break;
      case 'plan-select':
        lines.push(`plan-select ${event.test ?? 'null'}`);
        break;
      case 'warning':
        lines.push(`warning ${event.stage ?? ''}`);
        break;
      default:
        break;
    }
  }
  return lines;
}

export function eventsOf<K extends EventInput['type']>(
  events: readonly EventInput[],
  type: K,
): Extract<EventInput, { type: K }>[] {
  return events.filter((event): event is Extract<EventInput, { type: K }> => event.type === type);
}
