import { describe, expect, it } from 'vitest';
import { extractJsonObject } from '../../src/workflows/solve/json-repair.js';
import {
  parseAdjustment,
  parseMetaPlan,
  parsePartPlan,
  planArtifactFromMetaPlan,
} from '../../src/workflows/solve/parse-plan.js';

/** Seed 004's plan parsing and validation: repaired where unambiguous, refused with a reason the model can act on. */

/** The problem of a refused result ('' when it was not refused). */
function problemOf(result: { ok: true } | { ok: false; problem: string }): string {
  return result.ok ? '' : result.problem;
}

const part = (id: string, dependsOn: string[] = []) => ({
  id,
  description: `part ${id}`,
  affectedFiles: [`src/${id}.js`],
  dependsOn,
});

describe('extractJsonObject', () => {
  it('repairs a code fence, text around the object and trailing commas, and says so', () => {
    const result = extractJsonObject(
      'Sure! Here it is:\n```json\n{"a": [1, 2,], "b": {"c": 1,},}\n```\nHope that helps.',
    );
    expect(result).toEqual({
      ok: true,
      value: { a: [1, 2], b: { c: 1 } },
      repairs: ['removed a code fence', 'removed 3 trailing commas'],
    });
  });

  it('refuses what would need a guess: two different objects, single quotes, a cut-off object', () => {
    expect(problemOf(extractJsonObject('{"a": 1} or {"a": 2}'))).toContain('2 JSON objects');
    expect(problemOf(extractJsonObject("{'a': 1}"))).toContain('does not parse');
    expect(problemOf(extractJsonObject('{"a": [1, 2'))).toContain('cut off');
  });
});

describe('plan parsing and validation', () => {
  it('reads seed-style snake_case keys and fills left-out lists', () => {
    const parsed = parseMetaPlan(JSON.stringify({ task_summary: 'x', parts: [{ id: 'p1', description: 'd' }] }));
    expect(parsed).toMatchObject({
      ok: true,
      value: { taskSummary: 'x', parts: [{ id: 'p1', affectedFiles: [], dependsOn: [] }] },
    });
  });

  it('refuses duplicate ids, unknown dependencies and cycles, naming each', () => {
    const duplicate = parseMetaPlan(JSON.stringify({ taskSummary: 'x', parts: [part('p1'), part('p1')] }));
    expect(problemOf(duplicate)).toContain('"p1" is used twice');
    const unknown = parseMetaPlan(JSON.stringify({ taskSummary: 'x', parts: [part('p1', ['p9'])] }));
    expect(problemOf(unknown)).toContain('depends on "p9"');
    const cycle = parseMetaPlan(JSON.stringify({ taskSummary: 'x', parts: [part('p1', ['p2']), part('p2', ['p1'])] }));
    expect(problemOf(cycle)).toContain('cycle');
    const empty = parseMetaPlan(JSON.stringify({ taskSummary: 'x', parts: [] }));
    expect(problemOf(empty)).toContain('at least one part');
  });

  it("takes a part plan as the asked part's, whatever id the model wrote", () => {
    const parsed = parsePartPlan(
      JSON.stringify({ partId: 'P-1', taskSummary: 't', steps: [{ id: 's1', description: 'd' }] }),
      'p1',
    );
    expect(parsed).toMatchObject({ ok: true, value: { partId: 'p1' }, repairs: ['partId "P-1" read as "p1"'] });
  });

  it('refuses an adjustment that revises a step that has run', () => {
    const done = [{ id: 's1', description: 'd', targetFiles: [], targetSymbols: [], dependsOn: [] }];
    const parsed = parseAdjustment(JSON.stringify({ revisedSteps: [{ id: 's1', description: 'again' }] }), done);
    expect(problemOf(parsed)).toContain('s1');
    const ok = parseAdjustment(
      JSON.stringify({ revisedSteps: [{ id: 's2', description: 'next', dependsOn: ['s1'] }] }),
      done,
    );
    expect(ok.ok).toBe(true);
  });

  it('makes the PlanArtifact of a meta-plan: its files, and its parts in dependency order', () => {
    const artifact = planArtifactFromMetaPlan({
      taskSummary: 't',
      rationale: 'r',
      parts: [part('p2', ['p1']), part('p1')],
    });
    expect(artifact.executionOrder).toEqual(['p1', 'p2']);
    expect(artifact.affectedFiles.map((file) => file.path)).toEqual(['src/p1.js', 'src/p2.js']);
  });
});
