import { NOTES_REF, parseNote } from '../../core/handoff.js';
import { Git } from '../../git/git.js';
import type { Honesty } from './results.js';

export const noHonesty = (): Honesty => ({ redCommits: 0, redFailing: 0, greenCommits: 0, greenPassing: 0 });

/**
 * The honesty figures of a `ratchet tdd` run, recounted from its branch rather than taken from
 * its events: each RED checkpoint (`test: ...`) whose handoff note says its new test failed
 * (`testResult: FAIL`, no error), and each GREEN checkpoint (`feat: ...`) whose note says the
 * suite passed when it was committed. A checkpoint without a readable note counts against.
 */
export async function tddHonesty(repo: string, base: string, branch: string): Promise<Honesty> {
  const git = new Git(repo);
  const counted = noHonesty();
  for (const commit of await git.log(`${base}..${branch}`)) {
    const red = commit.subject.startsWith('test: ');
    const green = commit.subject.startsWith('feat: ');
    if (!red && !green) continue;
    const { state } = parseNote(await git.readNote(NOTES_REF, commit.sha));
    const clean = state !== null && state.error === null && state.errorDetails === null;
    if (red) {
      counted.redCommits += 1;
      if (clean && state.phase === 'RED' && state.testResult === 'FAIL') counted.redFailing += 1;
    } else {
      counted.greenCommits += 1;
      if (clean && state.phase === 'GREEN' && state.testResult === 'PASS') counted.greenPassing += 1;
    }
  }
  return counted;
}

/** `a` and `b` added up. */
export function addHonesty(a: Honesty, b: Honesty): Honesty {
  return {
    redCommits: a.redCommits + b.redCommits,
    redFailing: a.redFailing + b.redFailing,
    greenCommits: a.greenCommits + b.greenCommits,
    greenPassing: a.greenPassing + b.greenPassing,
  };
}
