import type { ErrorCode } from '../core/errors.js';

/** DESIGN.md, Exit codes. The CLI is the only place that maps errors to them. */
export const EXIT = {
  ok: 0,
  gateFailed: 1,
  usage: 2,
  provider: 3,
  interrupted: 4,
  sigint: 130,
} as const;

export function exitCodeFor(code: ErrorCode, bySigint: boolean): number {
  switch (code) {
    case 'usage':
    case 'config':
    case 'dirty-tree':
    case 'locked':
    case 'not-found':
      return EXIT.usage;
    case 'provider':
    case 'auth':
    case 'rate-limit':
    case 'overloaded':
    case 'network':
    case 'replay-mismatch':
      return EXIT.provider;
    case 'interrupted':
      return bySigint ? EXIT.sigint : EXIT.interrupted;
    case 'gate-failed':
    case 'git':
    case 'notes':
    case 'timeout':
    case 'internal':
      return EXIT.gateFailed;
  }
}
