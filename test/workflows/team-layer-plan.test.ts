import { describe, expect, it } from 'vitest';
import {
  layerCount,
  layersOf,
  requireSafeId,
  taskBranch,
  tasksOfLayer,
} from '../../src/workflows/team/layers/layer-plan.js';

describe('team layers: which tasks make up a dependency layer', () => {
  it('uses the layer the extraction wrote, and computes it from depends_on otherwise', () => {
    const tasks = [
      { id: 'c', depends_on: ['a', 'b'] },
      { id: 'a', depends_on: [] },
      { id: 'b', depends_on: ['a'] },
      { id: 'd', layer: 0, depends_on: ['c'] },
    ];
    expect(layersOf(tasks)).toEqual([
      { id: 'c', layer: 2 },
      { id: 'a', layer: 0 },
      { id: 'b', layer: 1 },
      { id: 'd', layer: 0 },
    ]);
    expect(tasksOfLayer(tasks, 0).map((task) => task.id)).toEqual(['a', 'd']);
    expect(layerCount(tasks)).toBe(3);
    expect(layerCount([])).toBe(0);
  });

  it('refuses a cycle, an unknown dependency and a duplicate id', () => {
    expect(() =>
      layersOf([
        { id: 'a', depends_on: ['b'] },
        { id: 'b', depends_on: ['a'] },
      ]),
    ).toThrow(/cycle/);
    expect(() => layersOf([{ id: 'a', depends_on: ['x'] }])).toThrow(/depends on x, which tasks.json does not list/);
    expect(() => layersOf([{ id: 'a' }, { id: 'a' }])).toThrow(/twice/);
  });

  it('refuses task ids a model could use to leave the worktrees folder or break a ref', () => {
    for (const id of ['../x', '-rf', 'a..b', 'a/b', 'x.lock', 'a b', '', 'a.']) {
      expect(() => requireSafeId('task', id), id).toThrow(/cannot name a branch or a directory/);
    }
    expect(() => layersOf([{ id: '../../etc' }])).toThrow(/cannot name/);
    expect(taskBranch('ratchet/team-iter-1-ab', { id: 'T1.v2', layer: 1 })).toBe('ratchet/team-iter-1-ab-L1-T1.v2');
  });
});
