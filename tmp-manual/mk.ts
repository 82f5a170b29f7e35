import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REFACTOR_FILES } from '../test/support/refactor-js-fixture.js';
const dir = process.argv[2] ?? '/tmp/man/repo';
for (const [path, text] of Object.entries(REFACTOR_FILES)) { mkdirSync(dirname(join(dir, path)), { recursive: true }); writeFileSync(join(dir, path), text); }
