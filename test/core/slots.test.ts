/**
 * `createSlots`: the tasks pool runs its tasks' test commands through it, as many at once as there
 * are cores; the others wait their turn, in order, and a failing command frees its slot.
 */
import { describe, expect, it } from 'vitest';
import { createSlots } from '../../src/core/slots.js';

/** A piece of work that runs until `finish` is called, recording when it starts. */
function gate(started: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    work: () => {
      started.push(name);
      return done;
    },
    finish: () => finish(name),
    fail: () => fail(new Error(`${name} failed`)),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('slots', () => {
  it('runs at most their number at once, the others in the order given as slots free up, a failure freeing its own', async () => {
    const slots = createSlots(2);
    const started: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => gate(started, name));
    if (!a || !b || !c || !d) throw new Error('four gates');
    const results = [a, b, c, d].map((entry) => slots(entry.work).catch((error: Error) => error.message));
    await settle();
    expect(started).toEqual(['a', 'b']);
    b.fail();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    a.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    c.finish();
    d.finish();
    expect(await Promise.all(results)).toEqual(['a', 'b failed', 'c', 'd']);
  });

  it('gives at least one slot', async () => {
    const started: string[] = [];
    const only = gate(started, 'only');
    const running = createSlots(0)(only.work);
    await settle();
    expect(started).toEqual(['only']);
    only.finish();
    expect(await running).toBe('only');
  });
});
