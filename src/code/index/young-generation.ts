/**
 * Keeps V8's young generation small while an index is built. Everything a build extracts
 * survives (the index holds it), and V8 answers a high survival rate by doubling the young
 * generation after collections, up to 64 MiB per semi-space on Node 24: 128 MiB of a cold
 * index's peak RSS were young generation that held almost nothing live at the end. Capped at 16
 * MiB, a cold index of 6,000 files peaks at about 190 MB instead of 330 MB, and its main thread
 * spends no more time (fewer survivors copied per scavenge; see bench/index.ts).
 *
 * Node has no runtime setting for the young generation's size (`--max-semi-space-size` is read
 * once, when the heap is made), but V8 reads `--semi-space-growth-factor` each time it grows the
 * young generation: the cap sets it to 1 once the young generation has reached its size, and
 * back to V8's default (2) when the last build running ends. Young-generation options given to
 * Node itself (`--max-semi-space-size` and the like, on the command line or in NODE_OPTIONS) are
 * the user's choice: the cap then does nothing.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The young generation's size (both semi-spaces) at which it stops growing. */
const CAP_BYTES = 16 * 1024 * 1024;
const DEFAULT_GROWTH_FACTOR = 2;

let running = 0;
let capped = false;

function userSetsYoungGeneration(): boolean {
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  return /semi[-_]space/.test(options);
}

function setGrowthFactor(factor: number): void {
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/** The cap for one build: `check()` every so often while it allocates, dispose it at the end. */
export class YoungGenerationCap implements Disposable {
  private disposed = false;

  private constructor() {
    running++;
  }

  /** A cap, or undefined when the user sets the young generation's size themselves. */
  static start(): YoungGenerationCap | undefined {
    return userSetsYoungGeneration() ? undefined : new YoungGenerationCap();
  }

  /** Stops the young generation's growth once it has reached the cap (cheap: a few microseconds). */
  check(): void {
    if (capped || this.disposed) return;
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young === undefined || young.space_size < CAP_BYTES) return;
    setGrowthFactor(1);
    capped = true;
  }

  [Symbol.dispose](): void {
    if (this.disposed) return;
    this.disposed = true;
    if (--running === 0 && capped) {
      setGrowthFactor(DEFAULT_GROWTH_FACTOR);
      capped = false;
    }
  }
}
