/**
 * A lock that runs the work given to it one piece at a time, in the order given, whether each
 * piece succeeds or fails (a failure is its caller's, never the next piece's).
 */
export type SerialLock = <T>(work: () => Promise<T>) => Promise<T>;

export function createSerialLock(): SerialLock {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const result = tail.then(work, work);
    tail = result.catch(() => undefined);
    return result;
  };
}
