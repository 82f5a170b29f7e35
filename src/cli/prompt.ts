import { createInterface } from 'node:readline/promises';

/**
 * Asks on the terminal (stderr); Ctrl-C or Ctrl-D at the prompt, or `stop` (the run's interrupt:
 * a SIGINT or SIGTERM sent to the process), answers with the default ('').
 */
export async function ask(question: string, stop?: AbortSignal): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const controller = new AbortController();
  rl.on('SIGINT', () => controller.abort());
  rl.on('close', () => controller.abort());
  const signal = stop ? AbortSignal.any([controller.signal, stop]) : controller.signal;
  try {
    return (await rl.question(question, { signal })).trim();
  } catch (error) {
    if (!signal.aborted) throw error;
    process.stderr.write('\n');
    return '';
  } finally {
    rl.close();
  }
}

/** A yes/no question whose default is no. */
export async function confirm(question: string, stop?: AbortSignal): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(question, stop));
}
