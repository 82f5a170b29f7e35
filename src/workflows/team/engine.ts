/**
 * The team conversation engine (seed 001, R2/R5): an async generator of `TeamEvent`s driven by a
 * `SessionPolicy`. It reads the conversation once, calls models and the injected file tools,
 * and never prints nor writes the log: the handler persists what it yields.
 *
 * The loop, in prose:
 * - The session starts at the agent turn the history in scope already reached; with an empty
 *   phase history and `injectKickoff`, the phase's kickoff message comes first.
 * - When the previous session ended on a turn after which the coach was due and the coach has
 *   not spoken since, the coach speaks first.
 * - Sequential sessions: agents speak in rotation, one turn each; after every `coachCadence`
 *   agent turns the coach speaks. Parallel sessions: every agent takes its turn on the same
 *   transcript at once (fan-out); their messages are yielded in agent order (fan-in), then the
 *   coach synthesises the round.
 * - It stops: after a turn that left writes pending approval (`PauseForApprovals`), when the
 *   coach signals the phase complete or asks the PM (as the policy says), or when `maxTurns`
 *   agent turns are reached (`SessionComplete`). Each of these is the last event.
 */
import type { GenerateOptions, ModelMessage, ModelResponse, ToolCall, ToolResult } from '../../core/model.js';
import { renderTemplate } from '../../config/prompts.js';
import type { SessionPorts, Speaker, TeamContext } from './context.js';
import type { DebugEntry, TeamEvent } from './events.js';
import { coachSpokeLast, countAgentTurns, renderTranscript, scopeHistory } from './history.js';
import type { SessionPolicy } from './policy.js';
import {
  AskPmInput,
  PassTurnInput,
  SignalPhaseCompleteInput,
  agentToolDefinitions,
  coachToolDefinitions,
  isFileTool,
} from './team-tools.js';
import { SYSTEM_SENDER, type TeamMessage } from './types.js';

/** Model calls one agent turn may make (file tool rounds); the turn ends with its text then. */
const MAX_TOOL_ROUNDS = 8;

type Stop = 'continue' | 'stop';

interface TurnState {
  history: TeamMessage[];
  pendingApprovals: number;
}

/** Runs one session of the team conversation; see the module comment for the loop. */
export async function* runSession(
  ctx: TeamContext,
  policy: SessionPolicy,
  ports: SessionPorts,
): AsyncGenerator<TeamEvent, void> {
  const agents = ctx.config.agents;
  const agentNames = agents.map((agent) => agent.name);
  const coach = policy.coachCadence === null ? null : ctx.config.coach;
  const state: TurnState = {
    history: scopeHistory(await ports.conversation.readFull(), policy.historyScope),
    pendingApprovals: 0,
  };
  let turn = countAgentTurns(state.history, agentNames);

  yield {
    type: 'SessionStarted',
    sessionId: policy.sessionId,
    phase: policy.phase,
    agents: agentNames,
    coach: coach?.name ?? null,
    currentLayer: policy.currentLayer,
    turn,
    maxTurns: policy.maxTurns,
    parallel: policy.parallel,
  };

  if (policy.injectKickoff && policy.phase !== null && state.history.length === 0) {
    const msg = systemMessage(policy, kickoffText(ctx, policy));
    state.history.push(msg);
    yield { type: 'KickoffInjected', msg };
    yield { type: 'AppendMessage', msg };
  }

  const coachDue = (): boolean =>
    coach !== null &&
    policy.coachCadence !== null &&
    turn > 0 &&
    turn % policy.coachCadence === 0 &&
    !coachSpokeLast(state.history, coach.name, agentNames);

  if (coach !== null && coachDue()) {
    if ((yield* coachTurn(ctx, policy, ports, coach, turn, state)) === 'stop') return;
  }

  while (turn < policy.maxTurns) {
    ports.signal?.throwIfAborted();
    if (policy.parallel) {
      const round = agents.slice(0, Math.max(1, Math.min(agents.length, policy.maxTurns - turn)));
      yield { type: 'ParallelRoundStarted', agents: round.map((agent) => agent.name), turn };
      const snapshot: TurnState = { history: [...state.history], pendingApprovals: 0 };
      // Fan-out: every agent reads the same transcript; fan-in: their events in agent order.
      const results = await Promise.all(
        round.map((agent, index) => collect(agentTurn(ctx, policy, ports, agent, turn + index, snapshot))),
      );
      for (const events of results) {
        for (const event of events) {
          if (event.type === 'AppendMessage') state.history.push(event.msg);
          yield event;
        }
      }
      state.pendingApprovals += snapshot.pendingApprovals;
      turn += round.length;
      if (state.pendingApprovals > 0) {
        yield { type: 'PauseForApprovals', pendingCount: state.pendingApprovals };
        return;
      }
      if (coach !== null && !coachSpokeLast(state.history, coach.name, agentNames)) {
        if ((yield* coachTurn(ctx, policy, ports, coach, turn, state)) === 'stop') return;
      }
      continue;
    }

    const agent = agents[turn % agents.length];
    if (agent === undefined) break;
    yield* agentTurn(ctx, policy, ports, agent, turn, state);
    turn += 1;
    if (state.pendingApprovals > 0) {
      yield { type: 'PauseForApprovals', pendingCount: state.pendingApprovals };
      return;
    }
    if (coach !== null && coachDue()) {
      if ((yield* coachTurn(ctx, policy, ports, coach, turn, state)) === 'stop') return;
    }
  }
  yield { type: 'SessionComplete', totalTurns: turn };
}

function generateOptions(ports: SessionPorts, speaker: string): GenerateOptions {
  const { signal, onTextDelta } = ports;
  return {
    ...(signal === undefined ? {} : { signal }),
    ...(onTextDelta === undefined ? {} : { onTextDelta: (delta: string) => onTextDelta(speaker, delta) }),
  };
}

async function collect(events: AsyncGenerator<TeamEvent, void>): Promise<TeamEvent[]> {
  const all: TeamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function systemMessage(policy: SessionPolicy, content: string, extra: Partial<TeamMessage> = {}): TeamMessage {
  return { from: SYSTEM_SENDER, iteration: policy.sessionId, content, ...extra };
}

function kickoffText(ctx: TeamContext, policy: SessionPolicy): string {
  const phase = policy.phase === null ? undefined : ctx.prompts.phases[policy.phase];
  return renderTemplate(phase?.kickoff ?? '', {
    first_agent: ctx.config.agents[0]?.name ?? '',
    current_layer: policy.currentLayer ?? 0,
  }).trim();
}

/** Template variables every speaker's prompt may use. */
function promptVariables(ctx: TeamContext, policy: SessionPolicy, speaker: Speaker): Record<string, string | number> {
  const phasePrompts = policy.phase === null ? null : ctx.prompts.phases[policy.phase];
  const artifacts = [
    policy.groomedSummary === null ? '' : `Refinement summary (groomed.md):\n${policy.groomedSummary.trim()}`,
    policy.tasksSummary === null ? '' : `Tasks:\n${policy.tasksSummary.trim()}`,
    policy.diffsSummary === null ? '' : `Changes so far:\n${policy.diffsSummary.trim()}`,
  ].filter((part) => part !== '');
  const layer = policy.currentLayer ?? 0;
  return {
    agent_name: speaker.name,
    role: speaker.role,
    teammates: ctx.config.agents
      .map((agent) => agent.name)
      .filter((name) => name !== speaker.name)
      .join(', '),
    coach_name: ctx.config.coach?.name ?? 'none',
    topic: policy.topic,
    phase: policy.phase ?? 'none',
    phase_prompt: renderTemplate(phasePrompts?.prompt ?? ctx.prompts.grooming.prompt, { current_layer: layer }).trim(),
    facilitation: renderTemplate(phasePrompts?.coach ?? '', { current_layer: layer }).trim(),
    artifacts: artifacts.join('\n\n'),
    current_layer: layer,
    first_agent: ctx.config.agents[0]?.name ?? '',
  };
}

function debugCall(
  speaker: string,
  stage: string,
  request: { system: string; messages: ModelMessage[]; tools: string[] },
  response: ModelResponse,
): DebugEntry {
  return {
    kind: 'model-call',
    speaker,
    stage,
    request,
    response: {
      text: response.text,
      toolCalls: response.toolCalls.map((call) => ({ name: call.name, input: call.input })),
      finishReason: response.finishReason,
    },
    model: response.model,
    provider: response.provider,
    usage: response.usage,
  };
}

/** One agent turn: model calls until a final text or `pass_turn`, file tools in between. */
async function* agentTurn(
  ctx: TeamContext,
  policy: SessionPolicy,
  ports: SessionPorts,
  agent: Speaker,
  turn: number,
  state: TurnState,
): AsyncGenerator<TeamEvent, void> {
  yield { type: 'AgentTurnStarted', agentName: agent.name, turn };
  const vars = promptVariables(ctx, policy, agent);
  const system = renderTemplate(ctx.prompts.agent.system, vars).trim();
  const offered = ports.files === null ? policy.agentTools.filter((name) => name === 'pass_turn') : policy.agentTools;
  const tools = agentToolDefinitions(ctx.prompts, offered, { byTask: policy.fileToolsByTask === true });
  const messages: ModelMessage[] = [
    {
      role: 'user',
      content: renderTemplate(ctx.prompts.agent.turn, { ...vars, conversation: renderTranscript(state.history) }),
    },
  ];
  const model = ports.modelFor(agent);
  const texts: string[] = [];
  let writes = 0;

  for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
    const response = await model.generate({ system, messages, tools }, generateOptions(ports, agent.name));
    yield {
      type: 'AppendDebug',
      entry: debugCall(
        agent.name,
        'AGENT',
        { system, messages: [...messages], tools: tools.map((tool) => tool.name) },
        response,
      ),
    };
    if (response.text.trim() !== '') texts.push(response.text.trim());

    const pass = response.toolCalls.find((call) => call.name === 'pass_turn' && offered.includes('pass_turn'));
    if (pass !== undefined) {
      if (texts.length > 0) yield* appendAgentText(policy, agent, texts, state);
      const parsed = PassTurnInput.safeParse(pass.input ?? {});
      const reason = parsed.success ? parsed.data.reason.trim() : '';
      const msg = systemMessage(policy, `(${agent.name} passed${reason === '' ? '' : `: ${reason}`})`, {
        pass_turn: true,
      });
      state.history.push(msg);
      yield { type: 'AgentPassed', agentName: agent.name, reason, msg };
      yield { type: 'AppendMessage', msg };
      return;
    }
    if (response.toolCalls.length === 0) break;

    const results: ToolResult[] = [];
    for (const call of response.toolCalls) {
      const result = yield* fileToolCall(ctx, ports, policy, agent, call, offered, () => ++writes, state);
      results.push(result);
    }
    messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls }, { role: 'tool', results });
  }
  yield* appendAgentText(policy, agent, texts, state);
}

function* appendAgentText(
  policy: SessionPolicy,
  agent: Speaker,
  texts: string[],
  state: TurnState,
): Generator<TeamEvent, void> {
  const msg: TeamMessage = {
    from: agent.name,
    iteration: policy.sessionId,
    content: texts.length === 0 ? '(no response)' : texts.join('\n\n'),
  };
  texts.length = 0;
  state.history.push(msg);
  yield { type: 'AppendMessage', msg };
}

async function* fileToolCall(
  ctx: TeamContext,
  ports: SessionPorts,
  policy: SessionPolicy,
  agent: Speaker,
  call: ToolCall,
  offered: SessionPolicy['agentTools'],
  countWrite: () => number,
  state: TurnState,
): AsyncGenerator<TeamEvent, ToolResult> {
  const result = (output: string, isError: boolean): ToolResult => ({
    toolCallId: call.id,
    toolName: call.name,
    output,
    isError,
  });
  if (ports.files === null || !isFileTool(call.name, offered)) {
    return result(`There is no tool named ${call.name} here. Available: ${offered.join(', ')}.`, true);
  }
  if (call.name === 'Write' && countWrite() > ctx.config.file_access.max_files_per_turn) {
    return result(
      `At most ${ctx.config.file_access.max_files_per_turn} files may be written in one turn; write the rest in your next turn.`,
      true,
    );
  }
  const outcome = await ports.files.execute(agent.name, call, ports.signal);
  yield {
    type: 'AppendDebug',
    entry: {
      kind: 'tool-call',
      speaker: agent.name,
      tool: call.name,
      input: call.input,
      output: outcome.output,
      isError: outcome.isError,
    },
  };
  const note =
    outcome.operation.outcome === 'written'
      ? `(${agent.name} wrote ${outcome.operation.path})`
      : outcome.operation.outcome === 'pending-approval'
        ? `(${agent.name} asks to write ${outcome.operation.path}: pending approval ${outcome.approval?.id ?? ''})`
        : null;
  const msg = note === null ? null : systemMessage(policy, note);
  yield { type: 'FileOperationLogged', agentName: agent.name, operation: outcome.operation, msg };
  if (msg !== null) {
    state.history.push(msg);
    yield { type: 'AppendMessage', msg };
  }
  if (outcome.approval !== null) {
    state.pendingApprovals += 1;
    yield { type: 'ApprovalRequested', approval: outcome.approval };
  }
  return result(outcome.output, outcome.isError);
}

/** One coach turn: facilitation text, and maybe `signal_phase_complete` or `ask_pm`. */
async function* coachTurn(
  ctx: TeamContext,
  policy: SessionPolicy,
  ports: SessionPorts,
  coach: Speaker,
  turn: number,
  state: TurnState,
): AsyncGenerator<TeamEvent, Stop> {
  yield { type: 'CoachTurnStarted', coachName: coach.name, turn };
  const vars = promptVariables(ctx, policy, coach);
  const system = renderTemplate(ctx.prompts.coach.system, vars).trim();
  const tools = coachToolDefinitions(ctx.prompts, policy.coachTools);
  const messages: ModelMessage[] = [
    {
      role: 'user',
      content: renderTemplate(ctx.prompts.agent.turn, { ...vars, conversation: renderTranscript(state.history) }),
    },
  ];
  const response = await ports
    .modelFor(coach)
    .generate({ system, messages, tools }, generateOptions(ports, coach.name));
  yield {
    type: 'AppendDebug',
    entry: debugCall(coach.name, 'COACH', { system, messages, tools: tools.map((tool) => tool.name) }, response),
  };
  const offered = new Set<string>(policy.coachTools);
  const call = (name: string): ToolCall | undefined =>
    response.toolCalls.find((candidate) => candidate.name === name && offered.has(name));
  const complete = call('signal_phase_complete');
  const ask = call('ask_pm');
  const askParsed = ask === undefined ? undefined : AskPmInput.safeParse(ask.input ?? {});
  const question = askParsed?.success === true ? askParsed.data.question.trim() : '';
  const summaryParsed = complete === undefined ? undefined : SignalPhaseCompleteInput.safeParse(complete.input ?? {});
  const summary = summaryParsed?.success === true ? summaryParsed.data.summary.trim() : '';

  // An empty text with a tool call still leaves a readable message in the log.
  const text = response.text.trim();
  const content =
    text !== ''
      ? question !== '' && !text.includes(question)
        ? `${text}\n\nQuestion for the PM: ${question}`
        : text
      : question !== ''
        ? `Question for the PM: ${question}`
        : summary !== ''
          ? `Phase complete: ${summary}`
          : '(no response)';
  const msg: TeamMessage = { from: coach.name, iteration: policy.sessionId, content };
  state.history.push(msg);
  yield { type: 'AppendMessage', msg };

  if (complete !== undefined) {
    yield { type: 'PhaseCompleteSignaled', summary: summary === '' ? text : summary, phase: policy.phase };
    if (policy.stopOnPhaseComplete) return 'stop';
  }
  if (ask !== undefined && question !== '') {
    yield { type: 'CoachAskedPM', question };
    if (policy.stopOnAskPm) return 'stop';
  }
  return 'continue';
}
