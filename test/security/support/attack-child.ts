/**
 * Runs the sandbox attacks (`sandbox-attacks.ts`) in a process of its own and prints the results
 * as one JSON line: `sandbox-escape.test.ts` starts it as an ordinary user (setpriv).
 */
import { runSandboxAttacks } from './sandbox-attacks.js';

const results = await runSandboxAttacks(process.env.ATTACK_HOME_PARENT);
process.stdout.write(`${JSON.stringify(results)}\n`);
