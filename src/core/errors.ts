/**
 * Typed errors. Every error Ratchet raises on purpose is a `RatchetError` with a stable `code`;
 * retryability is decided where the failure is observed (HTTP status, exit code), never by
 * matching message text later. The CLI maps codes to exit codes (see `cli/exit-codes.ts`).
 */
export type ErrorCode =
  /** Bad command-line input. */
  | 'usage'
  /** Invalid or missing configuration (config.toml, prompts.toml, test command). */
  | 'config'
  /** Provider rejected the request (400, 404, unknown model, malformed response). */
  | 'provider'
  /** Provider rejected the credentials (401, 403) or no key was configured. */
  | 'auth'
  /** 429 from the provider. */
  | 'rate-limit'
  /** 529 / 5xx from the provider. */
  | 'overloaded'
  /** Connection reset, refused, DNS, socket timeout while talking to a provider. */
  | 'network'
  /** A replay cassette did not match the request. */
  | 'replay-mismatch'
  /** A stage failed its deterministic gate after all attempts. */
  | 'gate-failed'
  /** A git command failed. */
  | 'git'
  /** Reading or writing git notes failed. */
  | 'notes'
  /** The repository has uncommitted changes and `--allow-dirty` was not given. */
  | 'dirty-tree'
  /** Another run holds the repository lock. */
  | 'locked'
  /** The run or resource asked for does not exist. */
  | 'not-found'
  /** Cancelled by signal (SIGINT / SIGTERM / AbortSignal). */
  | 'interrupted'
  /** A command or call exceeded its time limit. */
  | 'timeout'
  /** A bug: something that should not happen. */
  | 'internal';

export interface RatchetErrorOptions {
  cause?: unknown;
  /** True when repeating the same operation may succeed (rate limits, overload, resets). */
  retryable?: boolean;
  /** What the user should do next; shown under the message. */
  hint?: string;
  /** Server-provided wait before retrying, in milliseconds. */
  retryAfterMs?: number;
  /** Structured context for the ledger (never secrets). */
  details?: Record<string, unknown>;
}

export class RatchetError extends Error {
  override readonly name = 'RatchetError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly hint: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: RatchetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.hint = options.hint;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }
}

export function isRatchetError(error: unknown, code?: ErrorCode): error is RatchetError {
  return error instanceof RatchetError && (code === undefined || error.code === code);
}

/** Turns anything thrown into a RatchetError, keeping the original as `cause`. */
export function toRatchetError(error: unknown, fallback: ErrorCode = 'internal'): RatchetError {
  if (error instanceof RatchetError) return error;
  if (error instanceof Error && error.name === 'AbortError') {
    return new RatchetError('interrupted', 'Interrupted', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RatchetError(fallback, message, { cause: error });
}

/** Throws `interrupted` when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RatchetError('interrupted', 'Interrupted', { cause: signal.reason });
}
