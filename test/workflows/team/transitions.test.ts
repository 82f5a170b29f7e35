import { describe, expect, it } from 'vitest';
import {
  assignLayers,
  buildTransitionMessages,
  extractTaskNotes,
  extractTasks,
  parseModelJson,
} from '../../../src/workflows/team/transitions.js';
import { TeamTaskSchema } from '../../../src/workflows/team/types.js';
import { FakeModelClient } from '../../support/fake-model-client.js';
import { teamContext } from './team-fixtures.js';

const TASKS = [
  { id: 'parser', description: 'Parse expressions', done_criteria: 'parses', depends_on: [], assigned_to: 'agent-1' },
  { id: 'ops', description: 'Operators', done_criteria: 'adds', depends_on: [], assigned_to: 'agent-2' },
  { id: 'cli', description: 'The CLI', done_criteria: 'prints', depends_on: ['parser', 'ops'], assigned_to: 'agent-3' },
];

describe('team transitions', () => {
  const ctx = teamContext();
  const history = [{ from: 'agent-1', content: 'parser first, then the CLI' }];

  it('extracts tasks from a fenced JSON reply and puts them into dependency layers', async () => {
    const model = new FakeModelClient([{ text: `Here:\n\`\`\`json\n${JSON.stringify(TASKS)}\n\`\`\`` }]);
    const result = await extractTasks(ctx, { history, topic: 'calc', model });
    expect(result.ok && result.value.map((task) => [task.id, task.layer])).toEqual([
      ['parser', 0],
      ['ops', 0],
      ['cli', 1],
    ]);
    expect(model.lastRequest().system.split('\n')[0]).toBe('Stage: EXTRACT_TASKS');
    expect(JSON.stringify(model.lastRequest().messages)).toContain('parser first, then the CLI');
  });

  it('keeps a malformed reply raw with the reason instead of guessing', async () => {
    const model = new FakeModelClient([{ text: '[{"id": "parser", ' }]);
    const result = await extractTasks(ctx, { history, topic: 'calc', model });
    expect(result).toMatchObject({ ok: false, raw: '[{"id": "parser", ' });
    expect(!result.ok && result.problem).toMatch(/not valid JSON/);
  });

  it('refuses tasks assigned to nobody or to someone not on the team, keeping the reply raw', async () => {
    const reply = JSON.stringify(
      TASKS.map((task) =>
        task.id === 'ops' ? { ...task, assigned_to: '' } : task.id === 'cli' ? { ...task, assigned_to: 'bob' } : task,
      ),
    );
    const result = await extractTasks(ctx, { history, topic: 'calc', model: new FakeModelClient([{ text: reply }]) });
    expect(result).toMatchObject({ ok: false, raw: reply });
    expect(!result.ok && result.problem).toBe(
      'tasks assigned to nobody: ops; tasks assigned to someone not on the team: cli -> "bob" (the agents are agent-1, agent-2, agent-3)',
    );
  });

  it('refuses dependency cycles and unknown dependencies', () => {
    const tasks = TASKS.map((task) => TeamTaskSchema.parse(task));
    const cyclic = tasks.map((task) => (task.id === 'parser' ? { ...task, depends_on: ['cli'] } : task));
    expect(assignLayers(cyclic)).toMatchObject({ ok: false, problem: expect.stringMatching(/cycle/) as unknown });
    const unknown = tasks.map((task) => (task.id === 'ops' ? { ...task, depends_on: ['nope'] } : task));
    expect(assignLayers(unknown)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/ops -> nope/) as unknown,
    });
  });

  it('extracts implementation notes as a map of task id to text', async () => {
    const model = new FakeModelClient([{ text: '{"parser": "recursive descent"}' }]);
    const tasks = TASKS.map((task) => TeamTaskSchema.parse(task));
    const result = await extractTaskNotes(ctx, { history, tasks, model });
    expect(result).toMatchObject({ ok: true, value: { parser: 'recursive descent' } });
    expect(model.lastRequest().system.split('\n')[0]).toBe('Stage: EXTRACT_NOTES');
  });

  it('builds the boundary marker and the transition message', () => {
    const [boundary, transition] = buildTransitionMessages({
      fromPhase: 'planning',
      toPhase: 'pre-code-review',
      iterationId: 'iter-1',
      artifacts: ['tasks.json'],
    });
    expect(boundary).toMatchObject({
      from: 'system',
      phase_boundary: true,
      from_phase: 'planning',
      to_phase: 'pre-code-review',
    });
    expect(transition.content).toContain('tasks.json');
    expect(parseModelJson('nope')).toMatchObject({ ok: false });
  });
});
