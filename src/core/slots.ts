/**
 * At most `count` pieces of work at once; the others wait their turn in the order given. A
 * failure is its own caller's: the slot is freed for the next piece either way. One slot is a
 * lock that runs the work one piece at a time.
 */
export type Slots = <T>(work: () => Promise<T>) => Promise<T>;

export function createSlots(count: number): Slots {
  let free = Math.max(1, Math.floor(count));
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) free += 1;
    else next();
  };
  return async (work) => {
    if (free > 0) free -= 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      release();
    }
  };
}
