/*
 * "Special-cased inputs": an implementation that passes its test by recognising the test's exact
 * inputs and returning the test's exact expected values (`if (a === 2 && b === 3) return 6;`)
 * instead of computing anything. No gate can refuse it outright (faking it with a constant is a
 * legitimate TDD step, and the next test triangulates it away), so it is reported: GREEN warns,
 * and the warning goes into the ledger and the report.
 *
 * The check is a heuristic on text, pure and language-agnostic (JavaScript/TypeScript, Python,
 * Go, Java, Rust conditionals), chosen to be quiet on honest code: a guard is suspect when it
 * compares inputs with literals of the test and returns a literal of the test; the change is
 * suspected when one suspect guard compares two or more of the test's literals at once
 * (`a === 2 && b === 3`), or when suspect guards return two or more distinct values of the test
 * (a lookup by cases). A base case (`if (n === 0) return 1;`) is neither. A mutation tool (e.g.
 * Stryker for JS/TS), where installed, could answer the same question more surely at this seam:
 * mutants of the changed lines that survive the new test.
 */

export interface SpecialCaseFinding {
  /** The changed lines that return the test's expected values for the test's inputs. */
  evidence: string[];
}

const LITERAL = String.raw`(-?\d+(?:\.\d+)?|'(?:[^'\\\n]|\\.){0,80}'|"(?:[^"\\\n]|\\.){0,80}"|` + '`[^`$\\n]{0,80}`)';
const GUARD = /^\s*(?:\}\s*)?(?:if|elif|else\s+if|case|when)\b(.*)$/;
const COMPARED = new RegExp(`(?:===?|!==?|\\bis\\b)\\s*${LITERAL}|${LITERAL}\\s*(?:===?)`, 'g');
const RETURNED_HERE = new RegExp(`\\breturn\\s+${LITERAL}\\s*;?\\s*\\}?\\s*$|(?:=>|:)\\s*${LITERAL}\\s*,?\\s*$`);
const RETURNED_NEXT = new RegExp(`^\\s*\\{?\\s*return\\s+${LITERAL}\\s*;?\\s*\\}?\\s*$`);

/** Literals of a text, normalised (`2`, `2.0` -> `2`; quotes dropped). */
function literals(text: string): Set<string> {
  const found = new Set<string>();
  for (const match of text.matchAll(new RegExp(LITERAL, 'g'))) found.add(normalise(match[1] ?? ''));
  return found;
}

function normalise(literal: string): string {
  if (/^-?\d/.test(literal)) return String(Number(literal));
  return literal.slice(1, -1);
}

/**
 * Whether the lines a change added (`addedLines`, of the implementation) special-case the inputs
 * of the test (`testText`, the test file as RED wrote it); undefined when nothing is suspected.
 */
export function suspectSpecialCasing(testText: string, addedLines: readonly string[]): SpecialCaseFinding | undefined {
  const ofTest = literals(testText);
  const suspects: Array<{ line: string; compared: string[]; returned: string }> = [];
  for (let index = 0; index < addedLines.length; index++) {
    const line = addedLines[index] ?? '';
    const guard = GUARD.exec(line);
    if (guard === null) continue;
    const condition = guard[1] ?? '';
    const compared = [...condition.matchAll(COMPARED)].map((match) => normalise(match[1] ?? match[2] ?? ''));
    if (compared.length === 0 || !compared.every((literal) => ofTest.has(literal))) continue;
    const here = RETURNED_HERE.exec(condition);
    const next = here === null ? RETURNED_NEXT.exec(addedLines[index + 1] ?? '') : null;
    const returned = here?.[1] ?? here?.[2] ?? next?.[1];
    if (returned === undefined || !ofTest.has(normalise(returned))) continue;
    suspects.push({
      line: here === null ? `${line.trim()} ${addedLines[index + 1]?.trim() ?? ''}` : line.trim(),
      compared,
      returned: normalise(returned),
    });
  }
  const multiInput = suspects.some((suspect) => new Set(suspect.compared).size >= 2);
  const distinctReturns = new Set(suspects.map((suspect) => suspect.returned)).size;
  if (!multiInput && distinctReturns < 2) return undefined;
  return { evidence: suspects.map((suspect) => suspect.line) };
}

/** The lines of `after` that `before` does not have (a multiset difference: moved lines are not new). */
export function addedLines(before: string | null, after: string): string[] {
  const remaining = new Map<string, number>();
  for (const line of (before ?? '').split('\n')) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of after.split('\n')) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) remaining.set(line, count - 1);
    else added.push(line);
  }
  return added;
}
