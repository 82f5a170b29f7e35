import { describe, expect, it } from 'vitest';
import type { CodeIndex, CodeSymbol, IndexedFile, ResolvedImport } from '../../src/code/index/types.js';
import {
  DEFAULT_BUDGETS,
  buildContextPack,
  type BatchBrief,
  type ContextBudgets,
  type ContextPackInput,
} from '../../src/context/context-pack.js';

// --- a small in-memory repository and its index ---

function symbol(name: string, startLine: number, signature: string, extra: Partial<CodeSymbol> = {}): CodeSymbol {
  return { name, kind: 'function', exported: true, startLine, endLine: startLine + 2, signature, ...extra };
}

function importOf(specifier: string, resolved: string[], names: string[], line = 1): ResolvedImport {
  return { specifier, names, line, resolved };
}

function indexed(path: string, text: string, symbols: CodeSymbol[] = [], imports: ResolvedImport[] = []): IndexedFile {
  return {
    path,
    hash: `hash-of-${path}`,
    size: text.length,
    mtimeMs: 0,
    lines: text.split('\n').length,
    language: 'typescript',
    isTest: path.includes('.test.'),
    hasErrors: false,
    symbols,
    imports,
    exports: [],
    calls: [],
    cliFlags: [],
  };
}

const lines = (count: number, prefix: string): string =>
  Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`).join('\n');

const TEXT: Record<string, string> = {
  'src/target.ts':
    "import { helper, type Options } from './util.js';\nexport function run(options: Options): number {\n  return helper(options.size);\n}\n",
  'src/util.ts':
    '/** Doubles x. */\nexport function helper(x: number): number {\n  return x * 2;\n}\nexport interface Options { size: number }\nclass Cache {\n  get(): void {}\n}\n',
  'src/consumer.ts':
    "import { run, type Config } from './target.js';\nimport { run as again } from './target.js';\nrun({ size: 1 });\n",
  'src/side-effect.ts': "import './target.js';\n",
  'src/big.ts': `${lines(1000, '// filler')}\n`,
};

const FILES: IndexedFile[] = [
  indexed('src/big.ts', TEXT['src/big.ts'] ?? '', [
    symbol('first', 10, 'function first(): void', { doc: 'The first one.\nMore detail.' }),
    symbol('Hidden', 200, 'class Hidden', { kind: 'class', exported: false }),
    symbol('privateMethod', 210, 'privateMethod(): void', { kind: 'method', container: 'Hidden', exported: false }),
    symbol('last', 990, 'const last = 1', { kind: 'const' }),
  ]),
  indexed(
    'src/consumer.ts',
    TEXT['src/consumer.ts'] ?? '',
    [],
    [
      importOf('./target.js', ['src/target.ts'], ['run', 'Config'], 1),
      importOf('./target.js', ['src/target.ts'], ['run'], 2),
    ],
  ),
  indexed('src/side-effect.ts', TEXT['src/side-effect.ts'] ?? '', [], [importOf('./target.js', ['src/target.ts'], [])]),
  indexed(
    'src/target.ts',
    TEXT['src/target.ts'] ?? '',
    [symbol('run', 2, 'function run(options: Options): number')],
    [importOf('./util.js', ['src/util.ts'], ['helper', 'Options'])],
  ),
  indexed('src/util.ts', TEXT['src/util.ts'] ?? '', [
    symbol('helper', 2, 'function helper(x: number): number', { doc: 'Doubles x.' }),
    symbol('Options', 5, 'interface Options', { kind: 'interface' }),
    symbol('Cache', 6, 'class Cache', { kind: 'class', exported: false }),
    symbol('get', 7, 'get(): void', { kind: 'method', container: 'Cache', exported: false }),
  ]),
];

const INDEX: CodeIndex = {
  version: 1,
  root: '/repo',
  builtAt: '2025-01-01T00:00:00.000Z',
  scannedAt: 0,
  git: false,
  churnCommits: 0,
  gitHead: null,
  files: FILES,
  dependencies: {
    'src/consumer.ts': ['src/target.ts'],
    'src/side-effect.ts': ['src/target.ts'],
    'src/target.ts': ['src/util.ts'],
  },
  dependents: { 'src/target.ts': ['src/consumer.ts', 'src/side-effect.ts'], 'src/util.ts': ['src/target.ts'] },
  risk: [],
  stats: { parsed: 5, reused: 0, removed: 0, durationMs: 0, workers: 0 },
};

function brief(scope: string[], overrides: Partial<BatchBrief> = {}): BatchBrief {
  return {
    id: 'batch-004',
    goal: 'Split run into smaller functions',
    scope_globs: scope,
    allowed_operations: ['rename', 'extract-function'],
    diff_budget_loc: 120,
    risk_score: 35,
    ...overrides,
  };
}

function pack(overrides: Partial<ContextPackInput> = {}, budgets: Partial<ContextBudgets> = {}): string {
  return buildContextPack({
    batch: brief(['src/target.ts']),
    index: INDEX,
    readText: (path) => TEXT[path] ?? null,
    ledger: [],
    feedback: null,
    budgets: { ...DEFAULT_BUDGETS, ...budgets },
    ...overrides,
  });
}

/** The text of one `## Heading` section (up to the next one). */
function section(text: string, heading: string): string | undefined {
  return text.split(/\n\n(?=## |Answer with )/).find((part) => part.startsWith(`## ${heading}`));
}

describe('buildContextPack', () => {
  it('states the batch: goal, scope, operations, diff budget, risk and notes', () => {
    const text = pack({ batch: brief(['src/target.ts'], { notes: 'function run is 90 lines' }) });

    expect(
      text.startsWith(
        '# Batch batch-004: Split run into smaller functions\n\nScope (only these files may change): src/target.ts\n',
      ),
    ).toBe(true);
    expect(text).toContain(
      'Allowed operations: rename, extract-function\nDiff budget: at most 120 added + deleted lines\nRisk score: 35/100\nNotes: function run is 90 lines',
    );
    expect(
      text.endsWith(
        'Answer with the PatchResponse structured output. Return status "noop" if nothing is worth changing safely.',
      ),
    ).toBe(true);
    expect(pack({ batch: brief(['src/target.ts'], { allowed_operations: [] }) })).toContain(
      'Allowed operations: any behaviour-preserving refactoring\n',
    );
  });

  it('includes a small in-scope file whole, with line numbers', () => {
    const files = section(pack(), 'Files in scope') ?? '';

    expect(files).toBe(
      [
        '## Files in scope',
        '### src/target.ts (4 lines, complete)',
        "    1  import { helper, type Options } from './util.js';",
        '    2  export function run(options: Options): number {',
        '    3    return helper(options.size);',
        '    4  }',
      ].join('\n'),
    );
  });

  it('gives a file over the excerpt budget as an outline of its signatures and its first lines', () => {
    const text = pack({ batch: brief(['src/big.ts']) }, { maxExcerptLines: 50 });
    const files = section(text, 'Files in scope') ?? '';

    expect(files).toContain('### src/big.ts (1000 lines; outline, and the first 50 lines — use Read for the rest)');
    expect(files).toContain('  src/big.ts:10 export function first(): void  // The first one.');
    expect(files).not.toContain('More detail.');
    expect(files).toContain('  src/big.ts:200 class Hidden');
    expect(files).not.toContain('privateMethod');
    expect(files).toContain('  src/big.ts:990 export const last = 1');
    expect(files).toContain('   50  // filler 50');
    expect(files).not.toContain('// filler 51');
  });

  it('shares the excerpt budget between the files in scope', () => {
    const text = pack({ batch: brief(['src/target.ts', 'src/util.ts', 'src/big.ts']) }, { maxExcerptLines: 10 });
    const files = section(text, 'Files in scope') ?? '';

    // Index order: big.ts comes first and takes the whole budget as its head.
    expect(files).toContain('### src/big.ts (1000 lines; outline, and the first 10 lines — use Read for the rest)');
    expect(files).toContain('   10  // filler 10');
    expect(files).toContain(
      '### src/target.ts (4 lines; outline, and the first 0 lines — use Read for the rest)\n  src/target.ts:2 export function run(options: Options): number',
    );
    expect(files).not.toContain("    1  import { helper, type Options } from './util.js';");
  });

  it('keeps whole files while they fit', () => {
    const files =
      section(pack({ batch: brief(['src/target.ts', 'src/util.ts']) }, { maxExcerptLines: 12 }), 'Files in scope') ??
      '';

    expect(files).toContain('### src/target.ts (4 lines, complete)');
    expect(files).toContain('### src/util.ts (8 lines, complete)');
  });

  it('lists the signatures of the files the scope imports, but not of files in scope', () => {
    const text = pack();

    expect(section(text, 'Signatures of files the scope imports')).toBe(
      [
        '## Signatures of files the scope imports',
        '  src/util.ts:2 export function helper(x: number): number  // Doubles x.',
        '  src/util.ts:5 export interface Options',
        '  src/util.ts:6 class Cache',
      ].join('\n'),
    );
    expect(
      section(pack({ batch: brief(['src/target.ts', 'src/util.ts']) }), 'Signatures of files the scope imports'),
    ).toBeUndefined();
  });

  it('lists who depends on the scope and through which names', () => {
    expect(section(pack(), 'Who depends on the scope')).toBe(
      [
        '## Who depends on the scope (keep these names and signatures working)',
        '  src/consumer.ts uses src/target.ts: run, Config',
        '  src/side-effect.ts uses src/target.ts',
      ].join('\n'),
    );
  });

  it('includes the feedback on the previous attempt right after the batch', () => {
    const text = pack({ feedback: 'The fast verifier failed:\nFAIL src/target.test.ts' });

    expect(section(text, 'Feedback on your previous attempt')).toBe(
      '## Feedback on your previous attempt\nThe fast verifier failed:\nFAIL src/target.test.ts',
    );
    expect(text.indexOf('## Feedback')).toBeLessThan(text.indexOf('## Files in scope'));
    expect(pack()).not.toContain('## Feedback');
  });

  it('keeps the last N ledger entries, M lines each', () => {
    const ledger = Array.from(
      { length: 15 },
      (_, index) => `entry ${index + 1}\nsecond line ${index + 1}\nthird line ${index + 1}`,
    );
    const tail = section(pack({ ledger }, { ledgerEntries: 3, ledgerLinesPerEntry: 2 }), 'Recent batches') ?? '';

    expect(tail).toBe(
      [
        '## Recent batches (task ledger)',
        'entry 13',
        'second line 13',
        'entry 14',
        'second line 14',
        'entry 15',
        'second line 15',
      ].join('\n'),
    );
    expect(pack()).not.toContain('## Recent batches');
  });

  it('uses the seed defaults: 10 ledger entries of at most 8 lines', () => {
    const ledger = Array.from({ length: 12 }, (_, index) =>
      [
        `{"batch":"batch-${String(index + 1).padStart(3, '0')}"}`,
        ...Array.from({ length: 9 }, (_, line) => `  detail ${line + 1}`),
      ].join('\n'),
    );
    const tail = section(pack({ ledger }), 'Recent batches') ?? '';

    expect(tail).not.toContain('batch-002');
    expect(tail).toContain('batch-003');
    expect(tail).toContain('batch-012');
    expect(tail).toContain('detail 7');
    expect(tail).not.toContain('detail 8');
  });

  it('truncates to maxChars, keeping the batch and the feedback', () => {
    const text = pack({ batch: brief(['src/big.ts']), feedback: 'Previous patch failed.' }, { maxChars: 2000 });

    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text).toContain('\n\n[context truncated to 2000 characters]');
    // The answer instruction is never cut off.
    expect(text.endsWith('Return status "noop" if nothing is worth changing safely.')).toBe(true);
    expect(text).toContain('# Batch batch-004');
    expect(text).toContain('Previous patch failed.');
    expect(DEFAULT_BUDGETS).toEqual({
      maxChars: 40_000,
      maxExcerptLines: 600,
      ledgerEntries: 10,
      ledgerLinesPerEntry: 8,
    });
    expect(pack({ batch: brief(['src/big.ts']) }).length).toBeLessThanOrEqual(40_000);
  });

  it('says so when no indexed file matches the scope, and skips unreadable files', () => {
    expect(section(pack({ batch: brief(['lib/**']) }), 'Files in scope')).toBe(
      '## Files in scope\n(no indexed file matches the scope)',
    );
    expect(section(pack({ readText: () => null }), 'Files in scope')).toBe(
      '## Files in scope\n(no indexed file matches the scope)',
    );
  });

  it('is deterministic: the order in which the index lists files and their links does not matter', () => {
    // consumer.ts imports util.ts too, so a scope of consumer.ts imports two files.
    const index: CodeIndex = {
      ...INDEX,
      dependencies: { ...INDEX.dependencies, 'src/consumer.ts': ['src/target.ts', 'src/util.ts'] },
    };
    const reversed = <T>(items: readonly T[]): T[] => [...items].reverse();
    const reversedLinks = (links: Record<string, string[]>): Record<string, string[]> =>
      Object.fromEntries(reversed(Object.entries(links)).map(([path, targets]) => [path, reversed(targets)]));
    const shuffled: CodeIndex = {
      ...index,
      files: reversed(index.files),
      dependencies: reversedLinks(index.dependencies),
      dependents: reversedLinks(index.dependents),
    };
    const budgets = { maxExcerptLines: 10 };
    const packs = (scope: string[]): [string, string] => {
      const input = { batch: brief(scope), ledger: ['one', 'two'] };
      return [pack({ ...input, index }, budgets), pack({ ...input, index: shuffled }, budgets)];
    };

    const [several, severalShuffled] = packs(['src/big.ts', 'src/target.ts', 'src/util.ts']);
    expect(severalShuffled).toBe(several);
    // The files come in path order, which decides who gets the excerpt budget first.
    expect([...several.matchAll(/^### (\S+)/gm)].map((match) => match[1])).toEqual([
      'src/big.ts',
      'src/target.ts',
      'src/util.ts',
    ]);
    expect(section(several, 'Who depends on the scope')).toContain(
      '  src/consumer.ts uses src/target.ts: run, Config\n  src/side-effect.ts uses src/target.ts',
    );
    const [consumer, consumerShuffled] = packs(['src/consumer.ts']);
    expect(consumerShuffled).toBe(consumer);
    expect(section(consumer, 'Signatures of files the scope imports')).toMatch(
      /src\/target\.ts:2 [^]*src\/util\.ts:2 /,
    );
  });
});
