/**
 * The mocha kata the shared-`node_modules` attacks run on: a repository whose `node_modules` is a
 * link to installed runners (ignored by git, as a checkout's is), tested with `npx mocha`, and the
 * scripted PLAN and RED of its one item (a failing test of `double` and a stub). Each attack adds
 * its own GREEN.
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createProjectRepo, type ProjectRepo } from './e2e-run.js';
import { jsRunnersNodeModules } from './js-runners.js';
import { planSteps, say, write, type BrainScript } from './scripted-brain.js';

export const DOUBLE_ITEM = 'double returns twice its argument';
export const DOUBLE_TEST = `const assert = require('node:assert');
const { double } = require('../src/double.js');

it('${DOUBLE_ITEM}', () => {
  assert.strictEqual(double(2), 4);
});
`;
const STUB = 'exports.double = (n) => n;\n';

/** The kata's repository and the installed `node_modules` its link points to. */
export async function createDoubleKata(): Promise<{ repo: ProjectRepo; modules: string }> {
  const modules = jsRunnersNodeModules();
  const repo = await createProjectRepo({
    '.gitignore': 'node_modules\n',
    'package.json': `${JSON.stringify({ name: 'kata', private: true })}\n`,
    '.ratchet/config.toml': '[test]\ncommand = "npx mocha"\n',
    'test/version.test.js': "it('one is one', () => {});\n",
  });
  symlinkSync(modules, join(repo.dir, 'node_modules'), 'dir');
  return { repo, modules };
}

/** PLAN and RED of the kata's item, scripted. */
export function doubleKataRedSteps(): BrainScript['steps'] {
  return [
    ...planSteps('a double', [{ text: DOUBLE_ITEM, testFile: 'test/double.test.js', implFile: 'src/double.js' }]),
    {
      stage: 'RED',
      test: DOUBLE_ITEM,
      turns: [
        say('A failing test and a stub.', write('test/double.test.js', DOUBLE_TEST), write('src/double.js', STUB)),
      ],
    },
  ];
}
