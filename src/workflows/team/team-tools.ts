/** The tools of team conversations: declarations and the validation of their inputs. */
import { z } from 'zod';
import type { ToolDefinition } from '../../core/model.js';
import { toToolDefinition } from '../../agent/tools/agent-tool.js';
import { globTool } from '../../agent/tools/glob-tool.js';
import { readTool } from '../../agent/tools/read-tool.js';
import { writeTool } from '../../agent/tools/write-tool.js';
import type { AgentToolName, CoachToolName } from './policy.js';
import type { TeamPrompts } from './prompts.js';
import { TASK_FIELD } from './layers/task-router.js';

export const PassTurnInput = z.object({ reason: z.string().describe('Why you have nothing to add.').default('') });
export const SignalPhaseCompleteInput = z.object({
  summary: z.string().describe('The outcome of the phase, in a few sentences.').default(''),
});
export const AskPmInput = z.object({ question: z.string().describe('One clear question for the product manager.') });

function declare(name: string, description: string, schema: z.ZodType): ToolDefinition {
  const inputSchema: Record<string, unknown> = z.toJSONSchema(schema, { io: 'input' });
  delete inputSchema.$schema;
  return { name, description: description.trim(), inputSchema };
}

/** A file tool's definition with the optional `task` field (see layers/task-router.ts). */
function withTaskField(definition: ToolDefinition): ToolDefinition {
  const properties = definition.inputSchema.properties;
  return {
    ...definition,
    inputSchema: {
      ...definition.inputSchema,
      properties: { ...(typeof properties === 'object' && properties !== null ? properties : {}), task: TASK_FIELD },
    },
  };
}

export function agentToolDefinitions(
  prompts: TeamPrompts,
  names: readonly AgentToolName[],
  options: { byTask?: boolean } = {},
): ToolDefinition[] {
  const file = (definition: ToolDefinition) => (options.byTask === true ? withTaskField(definition) : definition);
  const all: Record<AgentToolName, () => ToolDefinition> = {
    pass_turn: () => declare('pass_turn', prompts.tools.pass_turn.description, PassTurnInput),
    Read: () => file(toToolDefinition(readTool)),
    Write: () => file(toToolDefinition(writeTool)),
    Glob: () => file(toToolDefinition(globTool)),
  };
  return names.map((name) => all[name]());
}

export function coachToolDefinitions(prompts: TeamPrompts, names: readonly CoachToolName[]): ToolDefinition[] {
  const all: Record<CoachToolName, () => ToolDefinition> = {
    signal_phase_complete: () =>
      declare('signal_phase_complete', prompts.tools.signal_phase_complete.description, SignalPhaseCompleteInput),
    ask_pm: () => declare('ask_pm', prompts.tools.ask_pm.description, AskPmInput),
  };
  return names.map((name) => all[name]());
}

/** Whether a tool call names one of the file tools an agent was offered. */
export function isFileTool(name: string, offered: readonly AgentToolName[]): boolean {
  return (name === 'Read' || name === 'Write' || name === 'Glob') && offered.includes(name);
}
