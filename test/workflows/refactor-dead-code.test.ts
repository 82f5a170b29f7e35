import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../../src/code/index/build-index.js';
import { deadFunctions } from '../../src/workflows/refactor/dead-code.js';

const FILES: Record<string, string> = {
  'src/list.js': [
    'function unusedHelper() {',
    '  return 1;',
    '}',
    'function format(x) {',
    '  return `<${x}>`;',
    '}',
    'function onClick() {}',
    'function called() {',
    '  return 2;',
    '}',
    'export function render(xs, button) {',
    "  button.addEventListener('click', onClick);",
    '  return xs.map(format).join() + called();',
    '}',
    '',
  ].join('\n'),
  'app/sort.py': [
    'def _key(item):',
    '    return item[1]',
    '',
    '',
    'def _handler():',
    '    return 0',
    '',
    '',
    'def _gone():',
    '    return 3',
    '',
    '',
    'HANDLERS = {"x": _handler}',
    '',
    '',
    'def ordered(items):',
    '    return sorted(items, key=_key)',
    '',
  ].join('\n'),
  'src/main.rs': [
    'fn helper() -> i32 {',
    '    1',
    '}',
    '',
    'fn stale() -> i32 {',
    '    2',
    '}',
    '',
    'fn main() {',
    '    println!("{}", helper());',
    '}',
    '',
    '#[test]',
    '#[should_panic]',
    'fn helper_never_panics() {',
    '    helper();',
    '}',
    '',
  ].join('\n'),
};

describe('deadFunctions', () => {
  let root: string;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-dead-code-')));
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('names only the functions nothing calls or passes as a value (callbacks, handler tables, macro arguments), never a #[test]', async () => {
    const index = await buildIndex({ root, cacheDir: join(root, '.cache'), excludes: [], git: false });
    const dead = await deadFunctions(index, root);

    expect(dead.get('src/list.js')).toEqual(['unusedHelper']);
    expect(dead.get('app/sort.py')).toEqual(['_gone']);
    // `main` too: nothing names it; the planner leaves the runtime's entry points alone.
    expect(dead.get('src/main.rs')).toEqual(['stale', 'main']);
  });
});
