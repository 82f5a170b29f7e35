/**
 * One solve pass (seed 004): a fresh context package for the pass's text, the prompt checked
 * against the model's window before any call (R3, framing counted: R5), one model call, and the
 * events that record it. `solve-pass-start` opens the pass; the caller closes it with `endPass`
 * once it has judged the answer, so everything the pass caused (the model calls, the tests) is
 * recorded between the two.
 */
import { z } from 'zod';
import { pipeEvents } from '../../core/event-pipe.js';
import { toRatchetError } from '../../core/errors.js';
import type { EventInput, SolveContextSummary, SolvePassType } from '../../core/events.js';
import type { ModelRequest, ModelResponse } from '../../core/model.js';
import type { SolvePassStage } from '../../core/stages.js';
import { checkPromptFits, promptCapacity } from '../../context/prompt-budget.js';
import { renderContextPackage } from '../../context/context-package.js';
import { retrieve, type PrecisionGrader } from '../../context/retrieve.js';
import { estimatePromptTokens, BYTES_PER_TOKEN } from '../../context/token-estimate.js';
import { extractJsonObject } from './json-repair.js';
import type { SolveDependencies, SolvePolicy } from './ports.js';
import type { SolveProgress } from './progress.js';
import { renderSolvePrompt, type SolvePromptStage } from './prompts.js';
import { camelizeKeys } from './schemas.js';

export type Step<T> = AsyncGenerator<EventInput, T>;

/** Shared state of one execution of the workflow. */
export interface SolveContext {
  policy: SolvePolicy;
  deps: SolveDependencies;
  signal: AbortSignal | undefined;
  /** Updated as the run goes; written with every checkpoint. */
  progress: SolveProgress;
}

export interface PassRequest {
  stage: SolvePassStage;
  passType: SolvePassType;
  partId: string | null;
  stepId: string | null;
  attempt: number;
  /** What retrieval looks for: the pass's text, the files and symbols the plan names. */
  retrieval: { task: string; seeds: readonly string[]; symbols: readonly string[] };
  /** The prompt's placeholders, `{context}` excepted. */
  vars: Record<string, string>;
  /** Appended to the user message: why the previous answer of this pass was rejected. */
  note?: string;
}

export type PassAnswer =
  | { ok: true; pass: number; text: string; response: ModelResponse; summary: SolveContextSummary }
  | { ok: false; pass: number; reason: string; summary: SolveContextSummary | null };

/** Sends one request and records it as a `model-call` event, answered or not. */
async function callModel(
  context: SolveContext,
  stage: SolvePromptStage,
  prompt: { system: string; user: string },
  emit: (event: EventInput) => void,
): Promise<ModelResponse> {
  const client = context.deps.models.client(stage, emit);
  const request: ModelRequest = {
    system: prompt.system,
    messages: [{ role: 'user', content: prompt.user }],
    tools: [],
    maxOutputTokens: context.deps.models.maxOutputTokens(stage),
  };
  const started = Date.now();
  try {
    const response = await client.generate(request, context.signal === undefined ? {} : { signal: context.signal });
    emit({
      type: 'model-call',
      stage,
      provider: client.provider,
      model: client.modelId,
      request,
      response,
      error: null,
      latencyMs: response.latencyMs,
    });
    return response;
  } catch (error) {
    const failure = toRatchetError(error);
    emit({
      type: 'model-call',
      stage,
      provider: client.provider,
      model: client.modelId,
      request,
      response: null,
      error: { code: failure.code, message: failure.message },
      latencyMs: Date.now() - started,
    });
    throw failure;
  }
}

const GradesSchema = z.object({
  grades: z.array(z.object({ path: z.string(), relevance: z.coerce.number() })),
});

/** The precision stage over the model: an answer that does not parse falls back to the scope order (with a warning). */
function modelGrader(context: SolveContext, emit: (event: EventInput) => void): PrecisionGrader {
  return {
    async grade(request) {
      const prompt = renderSolvePrompt(context.deps.prompts, 'PRECISION', {
        task: request.task,
        candidates: request.listing,
      });
      const fit = checkPromptFits('PRECISION', prompt.system, prompt.user, context.deps.models.budget('PRECISION'));
      if (!fit.ok) {
        emit({
          type: 'warning',
          stage: 'PRECISION',
          message: `${fit.message} Files are ranked by the scope stage alone.`,
        });
        return null;
      }
      const response = await callModel(context, 'PRECISION', prompt, emit);
      const extracted = extractJsonObject(response.text);
      const parsed = extracted.ok ? GradesSchema.safeParse(camelizeKeys(extracted.value)) : null;
      if (parsed === null || !parsed.success) {
        emit({
          type: 'warning',
          stage: 'PRECISION',
          message: `The precision grades could not be read (${extracted.ok ? 'they do not match {"grades": [{"path", "relevance"}]}' : extracted.problem}); files are ranked by the scope stage alone.`,
        });
        return null;
      }
      // `./src/a.py` is `src/a.py`; a path the listing never showed grades nothing.
      const grades = new Map(
        parsed.data.grades.map((grade) => [grade.path.replace(/^(?:\.\/)+/, ''), grade.relevance]),
      );
      const candidates = request.candidates.map((candidate) => candidate.path);
      if (!candidates.some((path) => grades.has(path))) {
        // Every candidate would count as irrelevant, and the pass would see no file at all.
        emit({
          type: 'warning',
          stage: 'PRECISION',
          message: `The precision grades name none of the ${candidates.length} candidate files (${[...grades.keys()].slice(0, 3).join(', ') || 'no path'}); files are ranked by the scope stage alone.`,
        });
        return null;
      }
      return grades;
    },
  };
}

/** The diff since the run's start, cut to a quarter of the window: older detail gives way to room for the files. */
export async function priorChanges(context: SolveContext, stage: SolvePromptStage): Promise<string> {
  const diff = await context.deps.workspace.diffSince(context.policy.baseCommit);
  if (diff.trim() === '') return '(none yet)';
  const maxBytes = Math.floor(promptCapacity(context.deps.models.budget(stage)) / 4) * BYTES_PER_TOKEN;
  if (Buffer.byteLength(diff) <= maxBytes) return diff;
  return `${diff.slice(0, Math.max(0, Math.floor(maxBytes / 2)))}\n[diff cut to fit the context window]`;
}

/**
 * Opens a pass and asks the model. Not a failure of the pass but of the run: a provider error
 * (after its retries) and an interruption are thrown, once recorded.
 */
export async function* askInPass(context: SolveContext, request: PassRequest): Step<PassAnswer> {
  const pass = ++context.progress.pass;
  yield {
    type: 'solve-pass-start',
    pass,
    passType: request.passType,
    partId: request.partId,
    stepId: request.stepId,
    attempt: request.attempt,
  };
  try {
    return yield* ask(context, request, pass);
  } catch (error) {
    const failure = toRatchetError(error);
    yield endPass(pass, 'failed', null, failure.message);
    throw failure;
  }
}

function render(context: SolveContext, request: PassRequest, contextText: string): { system: string; user: string } {
  const prompt = renderSolvePrompt(context.deps.prompts, request.stage, { ...request.vars, context: contextText });
  return request.note === undefined ? prompt : { system: prompt.system, user: `${prompt.user}\n\n${request.note}` };
}

async function* ask(context: SolveContext, request: PassRequest, pass: number): Step<PassAnswer> {
  const { deps, policy } = context;
  const budget = deps.models.budget(request.stage);
  const bare = render(context, request, '');
  const room = promptCapacity(budget) - estimatePromptTokens(bare.system, bare.user);
  const index = await deps.index();
  const pkg = yield* pipeEvents((emit) =>
    retrieve(
      {
        task: request.retrieval.task,
        seeds: request.retrieval.seeds,
        symbols: request.retrieval.symbols,
        index,
        readText: (path) => deps.workspace.readFile(path),
        stages: policy.stages,
        budgetTokens: Math.max(0, room),
        maxFullFiles: policy.maxFullFiles,
        wholeFiles: policy.context === 'whole-files',
      },
      modelGrader(context, emit),
    ),
  );
  const prompt = render(context, request, renderContextPackage(pkg));
  const fit = checkPromptFits(request.stage, prompt.system, prompt.user, budget);
  const summary: SolveContextSummary = {
    stages: [...pkg.stages],
    candidates: pkg.candidates,
    fullFiles: pkg.files.filter((file) => file.mode === 'full').map((file) => file.path),
    signatureFiles: pkg.files.filter((file) => file.mode === 'signatures').map((file) => file.path),
    promptTokens: fit.tokens,
    budgetTokens: promptCapacity(budget),
  };
  if (!fit.ok) return { ok: false, pass, reason: fit.message, summary };
  const response = yield* pipeEvents((emit) => callModel(context, request.stage, prompt, emit));
  return { ok: true, pass, text: response.text, response, summary };
}

/** Closes a pass. */
export function endPass(
  pass: number,
  outcome: 'ok' | 'failed',
  summary: SolveContextSummary | null,
  reason?: string,
): EventInput {
  return { type: 'solve-pass-end', pass, outcome, context: summary, ...(reason === undefined ? {} : { reason }) };
}
