/**
 * An agent's file tools when it owns tasks of the current layer: each call goes to the tools of
 * one task's worktree, so that its writes for task B land on B's branch, not on A's. The call
 * names the task in its `task` field (the tool definitions offer it in the implementation
 * phase: `TASK_FIELD`); an agent with one task may leave it out. A call that names no task while
 * the agent owns several, or a task that is not the agent's in this layer, is refused, never
 * guessed: a write routed to the wrong branch would be merged as the other task's work.
 */
import type { ToolCall } from '../../../core/model.js';
import type { FileToolOutcome, TeamFileTools } from '../context.js';
import type { FileOperation } from '../events.js';

/** The `task` field the file tools take in the implementation phase (JSON Schema). */
export const TASK_FIELD = {
  type: 'string',
  description:
    'The id of your task (in this layer) whose worktree the call works in. Required when you own several tasks of the layer.',
} as const;

function fieldOf(input: unknown, key: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[key] : undefined;
}

function withoutTask(input: unknown): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const { task: _task, ...rest } = input as Record<string, unknown>;
  return rest;
}

function toolOf(name: string): FileOperation['tool'] {
  return name === 'Read' || name === 'Glob' ? name : 'Write';
}

export function routeByTask(input: {
  layer: number;
  tasks: ReadonlyArray<{ task: string; tools: TeamFileTools }>;
}): TeamFileTools {
  const ids = input.tasks.map((space) => space.task);
  const refuse = (call: ToolCall, output: string): FileToolOutcome => {
    const path = fieldOf(call.input, call.name === 'Glob' ? 'pattern' : 'file_path');
    return {
      output,
      isError: true,
      operation: {
        tool: toolOf(call.name),
        path: typeof path === 'string' ? path : '',
        outcome: 'refused',
        detail: output,
      },
      approval: null,
    };
  };
  return {
    async execute(agentName, call, signal) {
      const named = fieldOf(call.input, 'task');
      const only = input.tasks.length === 1 ? input.tasks[0] : undefined;
      if (named === undefined || named === '') {
        if (only === undefined)
          return refuse(
            call,
            `You own tasks ${ids.join(', ')} in layer ${input.layer}: say which task this ${call.name} is for with "task" (one of ${ids.join(', ')}).`,
          );
        return only.tools.execute(agentName, { ...call, input: withoutTask(call.input) }, signal);
      }
      const space = input.tasks.find((candidate) => candidate.task === named);
      if (space === undefined)
        return refuse(
          call,
          `${JSON.stringify(named)} is not one of your tasks in layer ${input.layer}; yours: ${ids.join(', ')}.`,
        );
      return space.tools.execute(agentName, { ...call, input: withoutTask(call.input) }, signal);
    },
  };
}
