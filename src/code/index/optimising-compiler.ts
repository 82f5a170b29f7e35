/**
 * Keeps V8's optimising compiler (TurboFan) off while the first index of a process is built on a
 * machine of at most two cores. That build runs code nothing has compiled yet: V8 interprets it,
 * compiles the hot part with Maglev, then compiles it again with TurboFan, on background threads
 * that on two cores (or one shared core: see bench/index.ts's "effective cores") take their time
 * from the indexing thread. Measured on a cold index of 6,000 files in a fresh process, TurboFan
 * compiled about 150 functions (oxc's walker, the extractor, the cache writer) for about
 * 330 ms of CPU, while its code made the indexing thread only about 2% faster than Maglev's: the
 * build ends before the faster code pays for itself.
 *
 * Later builds of the same process (the refactor loop's updates, a long-running caller's
 * rebuilds) run with TurboFan as usual, and so does the first one where cores are plenty (the
 * compiler then has its own). Tiering options given to Node itself (`--max-opt`, `--turbofan`,
 * `--no-opt` and the like, on the command line or in NODE_OPTIONS) are the user's choice: the
 * build then leaves them alone.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/** What decides whether a build keeps TurboFan off. */
export interface TieringSituation {
  cores: number;
  /** Node's own options: `process.execArgv` and NODE_OPTIONS, joined. */
  nodeOptions: string;
  /** Builds this process has started before this one. */
  earlierBuilds: number;
}

/** True when a build in `situation` should keep TurboFan off while it runs. */
export function keepsTurbofanOff(situation: TieringSituation): boolean {
  return situation.cores <= 2 && situation.earlierBuilds === 0 && !USER_TIERING.test(situation.nodeOptions);
}

/** Node options that choose V8's tiers (V8 reads `_` and `-` alike in its flags' names). */
const USER_TIERING = /--(?:no[-_])?(?:turbofan|opt\b|max[-_]opt)/;

let started = 0;
let running = 0;
let off = false;

/** TurboFan kept off for one build: dispose it when the build ends (every build does). */
export class OptimisingCompilerPause implements Disposable {
  private disposed = false;

  private constructor() {
    running++;
  }

  /** Starts a build's pause: TurboFan goes off when `keepsTurbofanOff` says so. */
  static start(cores = availableParallelism()): OptimisingCompilerPause {
    const nodeOptions = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
    if (keepsTurbofanOff({ cores, nodeOptions, earlierBuilds: started }) && !off) {
      setFlagsFromString('--no-turbofan');
      off = true;
    }
    started++;
    return new OptimisingCompilerPause();
  }

  [Symbol.dispose](): void {
    if (this.disposed) return;
    this.disposed = true;
    if (--running === 0 && off) {
      setFlagsFromString('--turbofan');
      off = false;
    }
  }
}
