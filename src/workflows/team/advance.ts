/**
 * `team advance` (seed 001, R3's thin orchestrator): the extraction of the phase being left,
 * then the boundary and transition messages and the new phase. Extractions need a coach; a team
 * without one advances without artifacts.
 *
 * | leaving | extraction | writes |
 * | --- | --- | --- |
 * | refinement | EXTRACT_REFINEMENT | groomed.md |
 * | planning | EXTRACT_TASKS | tasks.json (dependencies, layers) |
 * | pre-code-review | EXTRACT_NOTES | notes into tasks.json |
 *
 * A reply that cannot be used is kept as `<name>.raw.txt` and reported; the iteration still
 * advances (the transition message says what was not produced), as the seed's transitions do,
 * and the user can write the artifact by hand from the raw text.
 */
import { RatchetError } from '../../core/errors.js';
import type { ModelClient } from '../../core/model.js';
import type { Speaker, TeamContext } from './context.js';
import type { DebugEntry } from './events.js';
import { createIterationStore } from './file-stores.js';
import { recordingModels, type TeamRecord } from './ledger-record.js';
import { lockIteration } from './iteration-lock.js';
import { iterationStores, type IterationStores } from './iteration-session.js';
import {
  buildTransitionMessages,
  extractRefinementSummary,
  extractTaskNotes,
  extractTasks,
  withNotes,
  type Extraction,
  type ExtractionCall,
} from './transitions.js';
import { nextPhase, type Iteration, type Phase, type TeamMessage, type TeamTask } from './types.js';

interface AdvanceProblem {
  /** What could not be extracted. */
  artifact: string;
  problem: string;
  /** Where the model's reply was kept. */
  rawFile: string;
}

export interface AdvanceResult {
  iteration: Iteration;
  from: Phase;
  to: Phase;
  /** Artifacts written (`groomed.md`, `tasks.json`). */
  written: string[];
  problems: AdvanceProblem[];
  tasks: TeamTask[] | null;
  messages: [TeamMessage, TeamMessage];
}

function debugOf(coach: string, call: ExtractionCall): DebugEntry {
  return {
    kind: 'model-call',
    speaker: coach,
    stage: call.stage,
    request: { system: call.system, messages: [{ role: 'user', content: call.user }], tools: [] },
    response: {
      text: call.response.text,
      toolCalls: call.response.toolCalls.map((toolCall) => ({ name: toolCall.name, input: toolCall.input })),
      finishReason: call.response.finishReason,
    },
    model: call.response.model,
    provider: call.response.provider,
    usage: call.response.usage,
  };
}

export async function advanceIteration(
  ctx: TeamContext,
  deps: {
    modelFor: (speaker: Speaker) => ModelClient;
    signal?: AbortSignal;
    record?: TeamRecord;
    /** Leave implementation although layers of tasks.json were never merged (`advance --force`). */
    force?: boolean;
  },
): Promise<AdvanceResult> {
  const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
  await using _lock = await lockIteration(ctx.teamDir, iteration.id);
  const stores: IterationStores = iterationStores(ctx, dir, iteration.id);
  const from = iteration.phase;
  const to = nextPhase(from);
  if (to === null)
    throw new RatchetError('usage', `The iteration ${iteration.id} is in ${from}, its last phase.`, {
      hint: 'Start the next iteration with `ratchet team run "<description>"`.',
    });
  const pending = await stores.approvals.pending();
  if (pending.length > 0)
    throw new RatchetError('usage', `${pending.length} write(s) still wait for approval.`, {
      hint: 'Resolve them first: `ratchet team approvals`, then `approve <id>` or `deny <id>`.',
    });

  let tasks = await stores.artifacts.readTasks();
  if (from === 'implementation' && deps.force !== true) refuseUnmergedLayers(iteration, tasks ?? [], to);

  const history = await stores.conversation.readPhaseHistory();
  const coach = ctx.config.coach;
  const written: string[] = [];
  const problems: AdvanceProblem[] = [];
  const base = { history, topic: iteration.description, ...(deps.signal ? { signal: deps.signal } : {}) };

  const keep = async <T>(result: Extraction<T>, artifact: string, rawName: string): Promise<T | null> => {
    if (coach !== null) await stores.debug.append(debugOf(coach.name, result.call));
    if (result.ok) return result.value;
    problems.push({ artifact, problem: result.problem, rawFile: await stores.artifacts.writeRaw(rawName, result.raw) });
    return null;
  };

  if (coach !== null) {
    const model = recordingModels(deps.modelFor, deps.record)(coach);
    if (from === 'refinement') {
      const summary = await keep(await extractRefinementSummary(ctx, { ...base, model }), 'groomed.md', 'groomed');
      if (summary !== null) {
        await stores.artifacts.writeGroomed(summary);
        written.push('groomed.md');
      }
    } else if (from === 'planning') {
      const extracted = await keep(await extractTasks(ctx, { ...base, model }), 'tasks.json', 'tasks');
      if (extracted !== null) {
        await stores.artifacts.writeTasks(extracted);
        tasks = extracted;
        written.push('tasks.json');
      }
    } else if (from === 'pre-code-review' && tasks !== null) {
      const notes = await keep(await extractTaskNotes(ctx, { ...base, tasks, model }), 'implementation notes', 'notes');
      if (notes !== null) {
        tasks = withNotes(tasks, notes);
        await stores.artifacts.writeTasks(tasks);
        written.push('implementation notes (tasks.json)');
      }
    }
  }

  const messages = buildTransitionMessages({
    fromPhase: from,
    toPhase: to,
    iterationId: iteration.id,
    artifacts: written,
  });
  for (const msg of messages) await stores.conversation.append(msg);
  const fields: Partial<Iteration> = { phase: to, ...(to === 'implementation' ? { current_layer: 0 } : {}) };
  await stores.iterations.saveFields(iteration.id, fields);
  // Every front end keeps the new phase's starting point (`checkpoint restore` goes back to it).
  await stores.checkpoints.create(`entering ${to}`);
  return { iteration: { ...iteration, ...fields }, from, to, written, problems, tasks, messages };
}

/**
 * Implementation goes layer by layer, and only a merge moves `current_layer` on: leaving it with a
 * layer not merged (the coach may signal the phase complete after the first) would take the
 * iteration to review with those tasks never implemented, and nothing would say so.
 */
function refuseUnmergedLayers(iteration: Iteration, tasks: readonly TeamTask[], to: Phase): void {
  const current = iteration.current_layer ?? 0;
  const left = tasks.filter((task) => (task.layer ?? 0) >= current);
  if (left.length === 0) return;
  const layers = [...new Set(left.map((task) => task.layer ?? 0))].sort((a, b) => a - b);
  throw new RatchetError(
    'usage',
    `${layers.length === 1 ? 'Layer' : 'Layers'} ${layers.join(', ')} of ${iteration.id} ${layers.length === 1 ? 'is' : 'are'} not merged yet (${left.map((task) => task.id).join(', ')}): advancing to ${to} would leave ${left.length === 1 ? 'that task' : 'those tasks'} unimplemented.`,
    {
      hint: `\`ratchet team worktrees setup\`, \`ratchet team continue\` for the agents to implement layer ${current}, \`ratchet team worktrees merge\`; or \`ratchet team advance --force\` to go on without them.`,
    },
  );
}
