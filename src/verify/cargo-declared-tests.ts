import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';

/*
 * `cargo test`'s console output is written by the test binaries, so code linked into them can
 * print it: a constructor in `.init_array` runs before libtest's `main`, prints `running 0 tests`
 * and a clean `test result:` line, and exits 0, and every binary then reads as an empty suite.
 * What the sources declare is the other witness: a crate whose files hold `#[test]` functions
 * (`#[test]`, `#[tokio::test]`, ...) did not run zero tests. The scan is for that one check only;
 * a test declared through a macro of the crate's own is missed (an empty suite is still never a
 * pass: the gates need a passing test, see `greenGate`).
 */

const TEST_ATTRIBUTE = /#\[\s*(?:[A-Za-z_][\w]*\s*::\s*)*test\s*(?:\(|\])/;

/** The `.rs` files under `root` (build output and dependencies left out) that declare a test, relative, sorted. */
export async function cargoDeclaredTests(root: string): Promise<string[]> {
  const files = await glob(['**/*.rs'], {
    cwd: root,
    ignore: ['**/target/**', '**/.git/**', '**/node_modules/**'],
    followSymbolicLinks: false,
  });
  const declaring: string[] = [];
  for (const file of files.sort()) {
    const text = await readFile(path.join(root, file), 'utf8').catch(() => '');
    if (TEST_ATTRIBUTE.test(text)) declaring.push(file);
  }
  return declaring;
}
