/** The oldest Node.js major Ratchet runs on (package.json `engines`). */
const REQUIRED_NODE_MAJOR = 22;

/**
 * The message for a Node.js `version` (as in `process.version`) too old for Ratchet, or null when
 * it is recent enough. Dependency-free: `bin.ts` runs it before loading anything else.
 */
export function nodeVersionProblem(version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);
  if (Number.isInteger(major) && major >= REQUIRED_NODE_MAJOR) return null;
  return (
    `error: Ratchet needs Node.js ${REQUIRED_NODE_MAJOR} or newer (developed on Node 24 LTS); this is Node ${version}.\n` +
    'hint: install a current Node.js (nvm, your package manager, or `npx node@24 ...`) and run Ratchet with it.'
  );
}
