/** Non-deterministic effects, injected so tests can control them. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms`, or rejects with `interrupted` when the signal fires. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface IdGenerator {
  /** A run id: sortable, filesystem- and branch-safe, e.g. `20261121-233624-a1b2`. */
  runId(): string;
  /** A random UUID v4. */
  uuid(): string;
}
