/** Waits until `condition` holds (checked every 100 ms); fails naming `what` after `timeoutMs`. */
export async function until(what: string, condition: () => boolean, timeoutMs = 120_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
