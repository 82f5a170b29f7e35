/**
 * What a refactoring goal (`--goal "split long functions"`) asks of a file, read from its words,
 * so that the heuristic plan has a batch only where the goal applies: "split long functions"
 * plans the files with a function over the size threshold, not every file of the repository.
 * A goal the words say nothing about ("use async/await") applies to every file of code.
 */
export type GoalFocus = 'dead-code' | 'tests' | 'long-functions' | 'long-files' | 'big-classes' | 'size';

const SIZE_WORDS =
  /\b(?:split|long|longer|large|big|huge|shorten|shorter|smaller|size|extract|break(?:ing)? up|complex(?:ity)?)\b/;

/** Asks for tests ("add tests", "improve test coverage"); "split long test functions" does not. */
const TESTS = /\b(?:coverage|untested)\b|\b(?:add|adding|write|writing|more|missing|cover|improve)\b.*\btests?\b/;

/** The focuses a goal names, in the order of `GoalFocus`; none for a goal about something else. */
export function goalFocuses(goal: string): GoalFocus[] {
  const words = goal.toLowerCase();
  const sized = SIZE_WORDS.test(words);
  const focuses: GoalFocus[] = [];
  if (/\b(?:dead|unused|unreferenced|unreachable)\b/.test(words)) focuses.push('dead-code');
  if (TESTS.test(words)) focuses.push('tests');
  if (sized && /\b(?:functions?|methods?|routines?|procedures?)\b/.test(words)) focuses.push('long-functions');
  if (sized && /\b(?:files?|modules?)\b/.test(words)) focuses.push('long-files');
  if (/\b(?:class(?:es)?|god objects?)\b/.test(words)) focuses.push('big-classes');
  if (sized && !focuses.some((focus) => focus.startsWith('long-') || focus === 'big-classes')) focuses.push('size');
  return focuses;
}
