/**
 * Phase transitions (seed 001, R3): each extraction is one model call that takes inputs and
 * returns outputs, and the boundary and transition messages are built, not written; the
 * `team advance` handler writes what they return. A reply that is not the JSON asked for is
 * returned as `raw` with the reason, for the handler to keep and show: nothing is guessed.
 */
import { z } from 'zod';
import type { ModelClient, ModelResponse } from '../../core/model.js';
import { renderTemplate } from '../../config/prompts.js';
import { dependencyLayers, findCycles } from '../tasks/task-graph.js';
import type { TeamContext } from './context.js';
import { renderTranscript } from './history.js';
import { SYSTEM_SENDER, TeamTaskSchema, type Phase, type TeamMessage, type TeamTask } from './types.js';

/** A model call of an extraction, for the debug log. */
export interface ExtractionCall {
  stage: string;
  system: string;
  user: string;
  response: ModelResponse;
}

export type Extraction<T> =
  { ok: true; value: T; call: ExtractionCall } | { ok: false; raw: string; problem: string; call: ExtractionCall };

async function extract(
  model: ModelClient,
  stage: string,
  prompt: { system: string; user: string },
  vars: Record<string, string>,
  signal?: AbortSignal,
): Promise<ExtractionCall> {
  const system = renderTemplate(prompt.system, vars).trim();
  const user = renderTemplate(prompt.user, vars).trim();
  const response = await model.generate(
    { system, messages: [{ role: 'user', content: user }], tools: [] },
    signal === undefined ? {} : { signal },
  );
  return { stage, system, user, response };
}

/** The JSON of a reply: the reply itself, or the content of its one Markdown code fence. */
export function parseModelJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  let body = text.replace(/^\uFEFF/, '').trim();
  const fences = [...body.matchAll(/```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)```/g)];
  if (fences.length === 1) body = (fences[0]?.[1] ?? '').trim();
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return {
      ok: false,
      problem: `the reply is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

/** The refinement summary (`groomed.md`): Markdown, kept as the model wrote it. */
export async function extractRefinementSummary(
  ctx: TeamContext,
  input: { history: readonly TeamMessage[]; topic: string; model: ModelClient; signal?: AbortSignal },
): Promise<Extraction<string>> {
  const call = await extract(
    input.model,
    'EXTRACT_REFINEMENT',
    ctx.prompts.extraction.refinement,
    { topic: input.topic, conversation: renderTranscript(input.history) },
    input.signal,
  );
  const text = call.response.text.trim();
  if (text === '') return { ok: false, raw: '', problem: 'the model returned an empty summary', call };
  return { ok: true, value: text, call };
}

/**
 * Gives each task its `layer`: 0 without dependencies, else one more than its deepest dependency.
 * Returns the problem instead when a dependency names no task or the dependencies form a cycle.
 */
export function assignLayers(
  tasks: readonly TeamTask[],
): { ok: true; tasks: TeamTask[] } | { ok: false; problem: string } {
  const ids = new Set(tasks.map((task) => task.id));
  if (ids.size !== tasks.length) return { ok: false, problem: 'two tasks have the same id' };
  const unknown = tasks.flatMap((task) =>
    task.depends_on.filter((id) => !ids.has(id)).map((id) => `${task.id} -> ${id}`),
  );
  if (unknown.length > 0)
    return { ok: false, problem: `dependencies on tasks that do not exist: ${unknown.join(', ')}` };
  const graph = tasks.map((task) => ({ key: task.id, dependsOn: task.depends_on }));
  const cycles = findCycles(graph);
  if (cycles.length > 0)
    return {
      ok: false,
      problem: `the dependencies form a cycle: ${cycles.map((cycle) => cycle.join(' -> ')).join('; ')}`,
    };
  const layerOf = new Map<string, number>();
  dependencyLayers(graph).forEach((layer, index) => {
    for (const key of layer) layerOf.set(key, index);
  });
  return { ok: true, tasks: tasks.map((task) => ({ ...task, layer: layerOf.get(task.id) ?? 0 })) };
}

/** The planning extraction: tasks with dependencies, each given its layer. */
export async function extractTasks(
  ctx: TeamContext,
  input: { history: readonly TeamMessage[]; topic: string; model: ModelClient; signal?: AbortSignal },
): Promise<Extraction<TeamTask[]>> {
  const call = await extract(
    input.model,
    'EXTRACT_TASKS',
    ctx.prompts.extraction.tasks,
    {
      topic: input.topic,
      conversation: renderTranscript(input.history),
      agent_names: ctx.config.agents.map((agent) => agent.name).join(', '),
    },
    input.signal,
  );
  const raw = call.response.text;
  const json = parseModelJson(raw);
  if (!json.ok) return { ok: false, raw, problem: json.problem, call };
  const parsed = z.array(TeamTaskSchema).min(1).safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      raw,
      problem: `the tasks do not have the expected shape (${issue?.path.join('.') || 'the list'}: ${issue?.message ?? 'invalid'})`,
      call,
    };
  }
  const assignment = assignmentProblem(
    parsed.data,
    ctx.config.agents.map((agent) => agent.name),
  );
  if (assignment !== null) return { ok: false, raw, problem: assignment, call };
  const layered = assignLayers(parsed.data);
  if (!layered.ok) return { ok: false, raw, problem: layered.problem, call };
  return { ok: true, value: layered.tasks, call };
}

/**
 * Why the tasks cannot be implemented as extracted: a task assigned to nobody, or to someone who
 * is not an agent of the team, would get no worktree writer and merge empty; null when each task
 * names one of `agents`.
 */
function assignmentProblem(tasks: readonly TeamTask[], agents: readonly string[]): string | null {
  const nobody = tasks.filter((task) => task.assigned_to.trim() === '').map((task) => task.id);
  const strangers = tasks
    .filter((task) => task.assigned_to.trim() !== '' && !agents.includes(task.assigned_to.trim()))
    .map((task) => `${task.id} -> ${JSON.stringify(task.assigned_to)}`);
  const problems = [
    nobody.length === 0 ? '' : `tasks assigned to nobody: ${nobody.join(', ')}`,
    strangers.length === 0 ? '' : `tasks assigned to someone not on the team: ${strangers.join(', ')}`,
  ].filter((problem) => problem !== '');
  return problems.length === 0 ? null : `${problems.join('; ')} (the agents are ${agents.join(', ')})`;
}

/** The pre-code-review extraction: implementation notes per task id. */
export async function extractTaskNotes(
  ctx: TeamContext,
  input: { history: readonly TeamMessage[]; tasks: readonly TeamTask[]; model: ModelClient; signal?: AbortSignal },
): Promise<Extraction<Record<string, string>>> {
  const call = await extract(
    input.model,
    'EXTRACT_NOTES',
    ctx.prompts.extraction.notes,
    { tasks_json: JSON.stringify(input.tasks, null, 2), conversation: renderTranscript(input.history) },
    input.signal,
  );
  const raw = call.response.text;
  const json = parseModelJson(raw);
  if (!json.ok) return { ok: false, raw, problem: json.problem, call };
  const parsed = z.record(z.string(), z.string()).safeParse(json.value);
  if (!parsed.success) return { ok: false, raw, problem: 'the notes are not one JSON object of task id to text', call };
  return { ok: true, value: parsed.data, call };
}

/** Adds the extracted notes to the tasks they name (other tasks keep theirs). */
export function withNotes(tasks: readonly TeamTask[], notes: Readonly<Record<string, string>>): TeamTask[] {
  return tasks.map((task) => (Object.hasOwn(notes, task.id) ? { ...task, notes: notes[task.id] } : task));
}

/**
 * The boundary marker (history scoped to a phase starts after it) and the transition message
 * that opens the next phase, saying what the extraction produced.
 */
export function buildTransitionMessages(input: {
  fromPhase: Phase;
  toPhase: Phase;
  iterationId: string;
  artifacts: readonly string[];
}): [TeamMessage, TeamMessage] {
  const boundary: TeamMessage = {
    from: SYSTEM_SENDER,
    iteration: input.iterationId,
    content: `--- Phase boundary: ${input.fromPhase} -> ${input.toPhase} ---`,
    phase_boundary: true,
    from_phase: input.fromPhase,
    to_phase: input.toPhase,
  };
  const produced = input.artifacts.length === 0 ? '' : ` Produced: ${input.artifacts.join(', ')}.`;
  const transition: TeamMessage = {
    from: SYSTEM_SENDER,
    iteration: input.iterationId,
    content: `The iteration moved from ${input.fromPhase} to ${input.toPhase}.${produced}`,
  };
  return [boundary, transition];
}

/** The tasks as agents read them in their prompts, grouped by layer. */
export function tasksSummary(tasks: readonly TeamTask[]): string {
  return tasks
    .map((task) => {
      const after = task.depends_on.length === 0 ? '' : ` (after ${task.depends_on.join(', ')})`;
      const owner = task.assigned_to === '' ? '' : ` [${task.assigned_to}]`;
      const notes = task.notes === undefined ? '' : `\n  notes: ${task.notes}`;
      return `- layer ${task.layer ?? 0}: ${task.id}${owner}${after}: ${task.description}${notes}`;
    })
    .join('\n');
}
