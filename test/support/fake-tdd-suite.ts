/**
 * The suite set-up the fake-TDD workflow tests share: one harness per test, disposed after it.
 */
import { afterEach } from 'vitest';
import { createHarness, type Harness, type HarnessOptions } from './fake-tdd-harness.js';

/**
 * Registers the disposal of each test's harness and returns the function a test creates it with:
 * `defaults`, then the test's own options.
 */
export function useHarness(defaults: Partial<HarnessOptions> = {}): (options: HarnessOptions) => Promise<Harness> {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.dispose();
    harness = undefined;
  });
  return async (options) => {
    harness = await createHarness({ ...defaults, ...options });
    return harness;
  };
}
