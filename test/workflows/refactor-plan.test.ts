import { describe, expect, it } from 'vitest';
import {
  boundPlannerBatches,
  FORMAT_OPERATION,
  heuristicPlan,
  isFormatBatch,
  testGlobsFor,
  type FileFacts,
  type PlanBounds,
} from '../../src/workflows/refactor/plan.js';
import { goalFocuses } from '../../src/workflows/refactor/plan-goal.js';
import type { PlannedBatch } from '../../src/workflows/refactor/schemas.js';

/** A source file with no findings at all (it plans nothing) unless overridden. */
function facts(path: string, overrides: Partial<FileFacts> = {}): FileFacts {
  return {
    path,
    language: 'typescript',
    lines: 40,
    fanIn: 0,
    churn: 0,
    hasTest: true,
    risk: 10,
    sizeReasons: [],
    unusedPrivateSymbols: [],
    role: 'code',
    ...overrides,
  };
}

function bounds(overrides: Partial<PlanBounds> = {}): PlanBounds {
  return { maxBatches: 200, diffBudgetLoc: 300, scopeGlobs: ['**'], scopeExcludes: [], files: [], ...overrides };
}

const plan = (files: FileFacts[], overrides: Partial<PlanBounds> = {}, goal: string | null = null): PlannedBatch[] =>
  heuristicPlan(files, { goal, bounds: bounds(overrides) });

/** One file of each kind of finding, listed out of order on purpose. */
const MIXED: FileFacts[] = [
  facts('src/big.ts', { risk: 70, sizeReasons: ['class Engine has 40 methods', 'file has 900 lines'] }),
  facts('src/untested.ts', { risk: 30, fanIn: 3, hasTest: false }),
  facts('src/long.ts', { risk: 20, sizeReasons: ['function run is 120 lines'] }),
  facts('src/risky-dead.ts', { risk: 50, unusedPrivateSymbols: ['oldHelper'] }),
  facts('src/dead.ts', { risk: 15, unusedPrivateSymbols: ['unused', 'alsoUnused'] }),
  facts('src/b-dead.ts', { risk: 15, unusedPrivateSymbols: ['x'] }),
];

describe('heuristicPlan', () => {
  it('orders import cleanup, small extracts, tests, restructures; by risk, then path, within each', () => {
    const batches = plan(MIXED);

    expect(batches.map((entry) => [entry.id, entry.goal])).toEqual([
      ['batch-001', 'Remove dead code in src/b-dead.ts'],
      ['batch-002', 'Remove dead code in src/dead.ts'],
      ['batch-003', 'Remove dead code in src/risky-dead.ts'],
      ['batch-004', 'Split long code in src/long.ts'],
      ['batch-005', 'Split long code in src/big.ts'],
      ['batch-006', 'Add tests for src/untested.ts'],
      ['batch-007', 'Restructure src/big.ts'],
    ]);
  });

  it('describes each batch: operations of its category, the finding as notes, the diff budget, one file in scope', () => {
    const batches = plan(MIXED, { diffBudgetLoc: 120 });
    const byGoal = new Map(batches.map((entry) => [entry.goal, entry]));

    expect(byGoal.get('Remove dead code in src/dead.ts')).toEqual({
      id: 'batch-002',
      goal: 'Remove dead code in src/dead.ts',
      scope_globs: ['src/dead.ts'],
      allowed_operations: ['remove-unused-imports', 'remove-dead-code'],
      diff_budget_loc: 120,
      risk_score: 15,
      verifier_level: 'fast',
      notes: 'unreferenced: unused, alsoUnused',
    });
    expect(byGoal.get('Split long code in src/big.ts')).toMatchObject({
      allowed_operations: ['rename', 'extract-function', 'split-module'],
      notes: 'file has 900 lines',
    });
    expect(byGoal.get('Restructure src/big.ts')).toMatchObject({
      allowed_operations: ['extract-class', 'move-code', 'split-module'],
      notes: 'class Engine has 40 methods',
    });
    expect(byGoal.get('Add tests for src/untested.ts')).toMatchObject({
      allowed_operations: ['add-tests', 'strengthen-tests'],
      notes: '3 files depend on it and no test covers it by convention',
    });
  });

  it('scopes a tests batch to the file and the conventional places of its test', () => {
    const [tests] = plan([facts('src/util/parse.ts', { fanIn: 2, hasTest: false })]);

    expect(tests?.scope_globs).toEqual([
      'src/util/parse.ts',
      '**/parse.test.*',
      '**/parse.spec.*',
      '**/test_parse.py',
      '**/parse_test.*',
      '**/parseTest.*',
    ]);
    expect(testGlobsFor('pkg/Parser.java')).toContain('**/ParserTest.*');
    expect(testGlobsFor('lib/tool.py')).toContain('**/test_tool.py');
    // A private module is tested without its underscore (attrs: _funcs.py, tests/test_funcs.py).
    expect(testGlobsFor('src/attr/_funcs.py')).toEqual(expect.arrayContaining(['**/test_funcs.py', '**/funcs_test.*']));
    expect(testGlobsFor('src/attr/_funcs.py')).not.toContain('**/test__funcs.py');
  });

  it('plans tests only for untested files something depends on', () => {
    expect(
      plan([facts('src/leaf.ts', { fanIn: 0, hasTest: false }), facts('src/covered.ts', { fanIn: 5, hasTest: true })]),
    ).toEqual([]);
  });

  it("never plans the runtime's entry points as dead code: Go main and init, Rust main", () => {
    const batches = plan([
      facts('cmd/tool/main.go', { language: 'go', unusedPrivateSymbols: ['init', 'main'] }),
      facts('pkg/util.go', { language: 'go', unusedPrivateSymbols: ['init', 'stale'] }),
      facts('src/main.rs', { language: 'rust', unusedPrivateSymbols: ['main'] }),
      // Elsewhere `main` is a function like any other.
      facts('src/main.ts', { unusedPrivateSymbols: ['main'] }),
    ]);

    expect(batches.map((entry) => `${entry.goal}: ${entry.notes ?? ''}`)).toEqual([
      'Remove dead code in pkg/util.go: unreferenced: stale',
      'Remove dead code in src/main.ts: unreferenced: main',
    ]);
  });

  it('says "1 file depends" for a single dependent', () => {
    expect(plan([facts('src/one.ts', { fanIn: 1, hasTest: false })])[0]?.notes).toBe(
      '1 file depends on it and no test covers it by convention',
    );
  });

  it('uses the full verifier from risk 60', () => {
    const batches = plan([
      facts('src/a.ts', { risk: 59, unusedPrivateSymbols: ['x'] }),
      facts('src/b.ts', { risk: 60, unusedPrivateSymbols: ['x'] }),
      facts('src/c.ts', { risk: 100, unusedPrivateSymbols: ['x'] }),
    ]);

    expect(batches.map((entry) => [entry.scope_globs[0], entry.risk_score, entry.verifier_level])).toEqual([
      ['src/a.ts', 59, 'fast'],
      ['src/b.ts', 60, 'full'],
      ['src/c.ts', 100, 'full'],
    ]);
  });

  it('skips test files', () => {
    const batches = plan([
      facts('src/a.test.ts', {
        role: 'test',
        unusedPrivateSymbols: ['x'],
        sizeReasons: ['file has 900 lines'],
        fanIn: 1,
        hasTest: false,
      }),
      facts('src/a.ts', { unusedPrivateSymbols: ['y'] }),
    ]);

    expect(batches.map((entry) => entry.scope_globs)).toEqual([['src/a.ts']]);
  });

  it('honours scope excludes, dot-files included', () => {
    const files = [
      facts('src/generated/api.ts', { unusedPrivateSymbols: ['x'] }),
      facts('.config/setup.ts', { unusedPrivateSymbols: ['x'] }),
      facts('src/keep.ts', { unusedPrivateSymbols: ['x'] }),
    ];

    expect(
      plan(files, { scopeExcludes: ['src/generated/**', '.config/**'] }).map((entry) => entry.scope_globs[0]),
    ).toEqual(['src/keep.ts']);
    expect(plan(files).map((entry) => entry.scope_globs[0])).toEqual([
      '.config/setup.ts',
      'src/generated/api.ts',
      'src/keep.ts',
    ]);
  });

  it('caps the plan at max_batches, keeping the least risky batches', () => {
    const batches = plan(MIXED, { maxBatches: 3 });

    expect(batches.map((entry) => [entry.id, entry.scope_globs[0]])).toEqual([
      ['batch-001', 'src/b-dead.ts'],
      ['batch-002', 'src/dead.ts'],
      ['batch-003', 'src/risky-dead.ts'],
    ]);
    expect(plan(MIXED, { maxBatches: 0 })).toEqual([]);
  });

  it('numbers ids batch-001, batch-002, ... past 99', () => {
    const many = Array.from({ length: 120 }, (_, index) =>
      facts(`src/f${String(index).padStart(3, '0')}.ts`, { unusedPrivateSymbols: ['x'] }),
    );
    const ids = plan(many).map((entry) => entry.id);

    expect(ids).toHaveLength(120);
    expect(ids.slice(0, 2)).toEqual(['batch-001', 'batch-002']);
    expect(ids.at(-1)).toBe('batch-120');
  });

  it('with a goal, plans one batch per eligible file, least risky first', () => {
    const files = [
      facts('src/b.ts', { risk: 40 }),
      facts('src/a.ts', { risk: 40, sizeReasons: ['function x is 90 lines'] }),
      facts('src/first.ts', { risk: 5, unusedPrivateSymbols: ['y'] }),
      facts('src/b.test.ts', { role: 'test' }),
      facts('vendor/lib.ts', { risk: 1 }),
      facts('src/hot.ts', { risk: 90 }),
    ];
    const batches = plan(files, { scopeExcludes: ['vendor/**'], diffBudgetLoc: 80 }, 'Use async/await');

    expect(batches).toEqual([
      {
        id: 'batch-001',
        goal: 'Use async/await (in src/first.ts)',
        scope_globs: ['src/first.ts'],
        allowed_operations: ['rename', 'extract-function', 'split-module'],
        diff_budget_loc: 80,
        risk_score: 5,
        verifier_level: 'fast',
        notes:
          'no finding: the goal is about nothing the index checks, so every file of code in scope gets a batch, least risky first (risk 5: 0 files depend on it, 0 recent commits, tested)',
      },
      {
        id: 'batch-002',
        goal: 'Use async/await (in src/a.ts)',
        scope_globs: ['src/a.ts'],
        allowed_operations: ['rename', 'extract-function', 'split-module'],
        diff_budget_loc: 80,
        risk_score: 40,
        verifier_level: 'fast',
        notes: 'function x is 90 lines',
      },
      {
        id: 'batch-003',
        goal: 'Use async/await (in src/b.ts)',
        scope_globs: ['src/b.ts'],
        allowed_operations: ['rename', 'extract-function', 'split-module'],
        diff_budget_loc: 80,
        risk_score: 40,
        verifier_level: 'fast',
        notes:
          'no finding: the goal is about nothing the index checks, so every file of code in scope gets a batch, least risky first (risk 40: 0 files depend on it, 0 recent commits, tested)',
      },
      {
        id: 'batch-004',
        goal: 'Use async/await (in src/hot.ts)',
        scope_globs: ['src/hot.ts'],
        allowed_operations: ['rename', 'extract-function', 'split-module'],
        diff_budget_loc: 80,
        risk_score: 90,
        verifier_level: 'full',
        notes:
          'no finding: the goal is about nothing the index checks, so every file of code in scope gets a batch, least risky first (risk 90: 0 files depend on it, 0 recent commits, tested)',
      },
    ]);
  });

  it('plans no batch in a directory no verifier command tests (a nested Go module), with or without a goal', () => {
    const files = [
      facts('lru.go', { language: 'go', unusedPrivateSymbols: ['stale'] }),
      facts('arc/arc.go', { language: 'go', unusedPrivateSymbols: ['stale'] }),
      facts('arcade/game.go', { language: 'go', unusedPrivateSymbols: ['stale'] }),
    ];
    const scopes = (goal: string | null) =>
      plan(files, { untestedDirs: ['arc'] }, goal).map((batch) => batch.scope_globs[0]);
    expect(scopes(null)).toEqual(['arcade/game.go', 'lru.go']);
    expect(scopes('Use generics')).toEqual(['arcade/game.go', 'lru.go']);
    // Nor does the planner's refinement get a batch there.
    const bounded = boundPlannerBatches(
      { batches: [{ ...plan(files)[0]!, id: 'p1', scope_globs: ['arc/**'] }] },
      bounds({ files: files.map((file) => file.path), untestedDirs: ['arc'] }),
    );
    expect(bounded.batches).toEqual([]);
  });

  it('is pure: same input, same plan, inputs untouched', () => {
    const files = MIXED.map((file) => ({ ...file }));
    const before = JSON.stringify(files);

    expect(plan(files)).toEqual(plan(files));
    expect(JSON.stringify(files)).toBe(before);
  });
});

/** Findings worded as the size checker words them (`checkNeedsRefactor`). */
const LONG_FUNCTION = (path: string, name: string): string =>
  `${path}: function \`${name}\` is 62 lines long (max 50, lines 18-79): extract smaller functions`;
const LONG_FILE = (path: string): string =>
  `${path} exceeds 400-line split threshold (455 lines): split it into cohesive modules`;
const BIG_CLASS = (path: string, name: string): string =>
  `${path}: class \`${name}\` has 18 methods (max 15): split its responsibilities`;

describe('only code gets batches, and a goal only where it applies (issue 13)', () => {
  /** more-itertools: more.py beside its stub more.pyi, a two-line __init__.pyi, docs/conf.py. */
  const MORE_ITERTOOLS: FileFacts[] = [
    facts('more_itertools/__init__.py', { language: 'python', fanIn: 1, risk: 25 }),
    facts('more_itertools/__init__.pyi', { language: 'python', role: 'contract', fanIn: 1, hasTest: false, risk: 2 }),
    facts('more_itertools/more.py', {
      language: 'python',
      risk: 53,
      sizeReasons: [
        LONG_FILE('more_itertools/more.py'),
        LONG_FUNCTION('more_itertools/more.py', 'distinct_permutations'),
      ],
    }),
    facts('more_itertools/more.pyi', {
      language: 'python',
      role: 'contract',
      risk: 39,
      fanIn: 1,
      hasTest: false,
      unusedPrivateSymbols: ['_nth_prime_ub'],
      sizeReasons: [LONG_FILE('more_itertools/more.pyi'), BIG_CLASS('more_itertools/more.pyi', 'numeric_range')],
    }),
    facts('more_itertools/recipes.py', { language: 'python', risk: 56 }),
    facts('docs/conf.py', { language: 'python', role: 'scaffolding', risk: 36, hasTest: false }),
    facts('tests/test_more.py', {
      language: 'python',
      role: 'test',
      hasTest: false,
      sizeReasons: [LONG_FILE('tests/test_more.py')],
    }),
  ];

  it('plans nothing on stubs, declaration files, types-only modules, scaffolding or tests, whatever they hold', () => {
    const batches = plan([
      ...MORE_ITERTOOLS,
      facts('src/types.ts', { role: 'contract', fanIn: 1, hasTest: false }),
      facts('index.d.ts', {
        role: 'contract',
        unusedPrivateSymbols: ['helper'],
        sizeReasons: [LONG_FILE('index.d.ts')],
      }),
    ]);

    expect(batches.map((entry) => entry.goal)).toEqual(['Split long code in more_itertools/more.py']);
  });

  it('never plans a test module: not its #[test] functions as dead code, not tests for it', () => {
    const batches = plan([
      facts('src/test.rs', {
        language: 'rust',
        role: 'test',
        fanIn: 1,
        hasTest: false,
        unusedPrivateSymbols: ['unwrap_panic', 'wrap_std_iter_into_fallible'],
      }),
    ]);

    expect(batches).toEqual([]);
  });

  it("never plans a Rust function named with a leading underscore as dead code (unused on purpose: fallible-iterator's _is_object_safe)", () => {
    const batches = plan([
      facts('src/lib.rs', { language: 'rust', unusedPrivateSymbols: ['_is_object_safe', 'stale'] }),
      // In Python a leading underscore means private, and a private function can be dead.
      facts('pkg/util.py', { language: 'python', unusedPrivateSymbols: ['_gone'] }),
    ]);

    expect(batches.map((entry) => entry.notes)).toEqual(['unreferenced: _gone', 'unreferenced: stale']);
  });

  it('with "split long functions", plans only the files with a function over the limit', () => {
    const batches = plan(MORE_ITERTOOLS, {}, 'split long functions');

    expect(batches).toEqual([
      {
        id: 'batch-001',
        goal: 'split long functions (in more_itertools/more.py)',
        scope_globs: ['more_itertools/more.py'],
        allowed_operations: ['rename', 'extract-function', 'split-module'],
        diff_budget_loc: 300,
        risk_score: 53,
        verifier_level: 'fast',
        notes: LONG_FUNCTION('more_itertools/more.py', 'distinct_permutations'),
      },
    ]);
  });

  it('with a goal about tests, plans tests for the untested files of code only, their test places in scope', () => {
    const batches = plan(
      [
        ...MORE_ITERTOOLS,
        facts('src/attr/_cmp.py', { language: 'python', hasTest: false, risk: 42 }),
        facts('src/attr/_funcs.py', { language: 'python', hasTest: true, risk: 45 }),
      ],
      {},
      'add tests for untested modules',
    );

    expect(batches.map((entry) => [entry.goal, entry.scope_globs, entry.allowed_operations])).toEqual([
      [
        'add tests for untested modules (in src/attr/_cmp.py)',
        ['src/attr/_cmp.py', '**/_cmp.test.*', '**/_cmp.spec.*', '**/test_cmp.py', '**/cmp_test.*', '**/_cmpTest.*'],
        ['add-tests', 'strengthen-tests'],
      ],
    ]);
  });

  it('with a goal naming several findings, one batch per file where any applies, with the operations of each', () => {
    const batches = plan(
      [
        facts('src/a.py', { language: 'python', risk: 10, unusedPrivateSymbols: ['_old'] }),
        facts('src/b.py', { language: 'python', risk: 20, sizeReasons: [BIG_CLASS('src/b.py', 'Builder')] }),
        facts('src/c.py', { language: 'python', risk: 30 }),
      ],
      {},
      'remove dead code and split big classes',
    );

    expect(batches.map((entry) => [entry.goal, entry.allowed_operations, entry.notes])).toEqual([
      [
        'remove dead code and split big classes (in src/a.py)',
        ['remove-unused-imports', 'remove-dead-code'],
        'unreferenced: _old',
      ],
      [
        'remove dead code and split big classes (in src/b.py)',
        ['extract-class', 'move-code', 'split-module'],
        BIG_CLASS('src/b.py', 'Builder'),
      ],
    ]);
  });

  it('restructures for a class of many methods, not for a long method whose name says "class"', () => {
    const longMethod =
      'src/attr/_make.py: method `_ClassBuilder._create_slots_class` is 144 lines long (max 50, lines 859-1002): extract smaller functions';
    const batches = plan([
      facts('src/attr/_make.py', {
        language: 'python',
        sizeReasons: [longMethod, BIG_CLASS('src/attr/_make.py', '_ClassBuilder')],
      }),
    ]);

    expect(batches.map((entry) => [entry.goal, entry.notes])).toEqual([
      ['Split long code in src/attr/_make.py', longMethod],
      ['Restructure src/attr/_make.py', BIG_CLASS('src/attr/_make.py', '_ClassBuilder')],
    ]);
  });
});

describe('goalFocuses', () => {
  it('reads what a goal asks for from its words', () => {
    expect(goalFocuses('split long functions')).toEqual(['long-functions']);
    expect(goalFocuses('Break up large modules')).toEqual(['long-files']);
    expect(goalFocuses('split god classes')).toEqual(['big-classes']);
    expect(goalFocuses('reduce complexity')).toEqual(['size']);
    expect(goalFocuses('improve test coverage')).toEqual(['tests']);
    expect(goalFocuses('add tests')).toEqual(['tests']);
    expect(goalFocuses('delete unused code')).toEqual(['dead-code']);
    // Tests are not asked for: the functions to split are in tests, which get no batches anyway.
    expect(goalFocuses('split long test functions')).toEqual(['long-functions']);
    // About none of the findings: the goal applies to every file of code.
    expect(goalFocuses('Use async/await')).toEqual([]);
  });
});

describe('the formatting-only pass (seed 002, 11.2 step 1)', () => {
  it('comes first when a formatter is configured, scoped to everything, at risk 0', () => {
    const batches = plan(MIXED, { formatting: true });

    expect(batches[0]).toEqual({
      id: 'batch-001',
      goal: 'Format the code with the configured formatter (formatting-only)',
      scope_globs: ['**'],
      allowed_operations: [FORMAT_OPERATION],
      diff_budget_loc: 300,
      risk_score: 0,
      verifier_level: 'fast',
      notes: expect.any(String) as unknown,
    });
    expect(batches.slice(1).map((entry) => entry.goal)).toEqual(plan(MIXED).map((entry) => entry.goal));
    expect(batches.filter(isFormatBatch)).toHaveLength(1);
  });

  it('is planned even when nothing else is, and never without a formatter', () => {
    expect(plan([facts('src/clean.ts')], { formatting: true }).map((entry) => entry.allowed_operations)).toEqual([
      [FORMAT_OPERATION],
    ]);
    expect(plan(MIXED).some(isFormatBatch)).toBe(false);
    expect(plan(MIXED, { formatting: true, maxBatches: 1 }).map((entry) => entry.id)).toEqual(['batch-001']);
  });
});

describe('boundPlannerBatches', () => {
  const FILES = ['src/a.ts', 'src/b.ts', 'src/util/c.ts', 'src/generated/api.ts', 'test/a.test.ts'];

  function proposed(id: string, scope: string[], overrides: Partial<PlannedBatch> = {}): PlannedBatch {
    return {
      id,
      goal: `goal of ${id}`,
      scope_globs: scope,
      allowed_operations: ['rename'],
      diff_budget_loc: 100,
      risk_score: 20,
      verifier_level: 'fast',
      ...overrides,
    };
  }

  it('keeps batches whose scope matches a file, renumbering their ids', () => {
    const result = boundPlannerBatches(
      {
        batches: [
          proposed('x-1', ['src/a.ts']),
          proposed('later', ['src/util/**'], { verifier_level: 'full', risk_score: 75, notes: 'careful' }),
        ],
      },
      bounds({ files: FILES }),
    );

    expect(result.dropped).toEqual([]);
    expect(result.batches).toEqual([
      // A batch the planner gave no note says so: the plan never shows a batch without a reason.
      proposed('batch-001', ['src/a.ts'], {
        goal: 'goal of x-1',
        notes: 'no finding: the planner model chose this scope without a note',
      }),
      proposed('batch-002', ['src/util/**'], {
        goal: 'goal of later',
        verifier_level: 'full',
        risk_score: 75,
        notes: 'careful',
      }),
    ]);
  });

  it('drops a batch whose scope matches no indexed file, saying why', () => {
    const result = boundPlannerBatches(
      { batches: [proposed('b1', ['src/missing.ts', 'lib/**']), proposed('b2', ['src/b.ts'])] },
      bounds({ files: FILES }),
    );

    expect(result.dropped).toEqual(['b1: scope src/missing.ts, lib/** matches no file a patch may change']);
    expect(result.batches.map((entry) => [entry.id, entry.goal])).toEqual([['batch-001', 'goal of b2']]);
  });

  it('drops a batch whose scope matches only files no patch may change (the ones that define verification)', () => {
    const files = [...FILES, 'package.json', 'tsconfig.json'];
    const result = boundPlannerBatches(
      { batches: [proposed('config', ['package.json', 'tsconfig.json']), proposed('code', ['src/b.ts'])] },
      bounds({ files, isProtected: (path) => path === 'package.json' || path === 'tsconfig.json' }),
    );

    expect(result.dropped).toEqual(['config: scope package.json, tsconfig.json matches no file a patch may change']);
    expect(result.batches.map((entry) => entry.goal)).toEqual(['goal of code']);
  });

  it('drops a batch whose scope matches only excluded files', () => {
    const result = boundPlannerBatches(
      { batches: [proposed('gen', ['src/generated/**']), proposed('mixed', ['src/generated/**', 'src/b.ts'])] },
      bounds({ files: FILES, scopeExcludes: ['src/generated/**'] }),
    );

    expect(result.dropped).toEqual(['gen: scope src/generated/** matches no file a patch may change']);
    expect(result.batches.map((entry) => entry.goal)).toEqual(['goal of mixed']);
  });

  it('never widens the configured scope: a batch matching only files outside scope_globs is dropped', () => {
    const files = [...FILES, '.github/workflows/ci.yml', 'scripts/deploy.sh'];
    const result = boundPlannerBatches(
      {
        batches: [
          proposed('ci', ['.github/**', 'scripts/**']),
          proposed('all', ['**']),
          proposed('code', ['src/a.ts']),
        ],
      },
      bounds({ files, scopeGlobs: ['src/**', 'test/**'] }),
    );

    expect(result.dropped).toEqual(['ci: scope .github/**, scripts/** matches no file a patch may change']);
    // `**` stays a batch, but narrowed in effect: admission checks each file against both scopes.
    expect(result.batches.map((entry) => entry.goal)).toEqual(['goal of all', 'goal of code']);
    expect(
      plan([facts('scripts/deploy.ts', { sizeReasons: ['long'] }), facts('src/a.ts', { sizeReasons: ['long'] })], {
        scopeGlobs: ['src/**'],
      }).map((entry) => entry.scope_globs),
    ).toEqual([['src/a.ts']]);
  });

  it('clamps each diff budget to the configured one', () => {
    const result = boundPlannerBatches(
      {
        batches: [
          proposed('big', ['src/a.ts'], { diff_budget_loc: 5000 }),
          proposed('small', ['src/b.ts'], { diff_budget_loc: 40 }),
        ],
      },
      bounds({ files: FILES, diffBudgetLoc: 300 }),
    );

    expect(result.batches.map((entry) => entry.diff_budget_loc)).toEqual([300, 40]);
  });

  it('caps the count at max_batches and reports each batch over it', () => {
    const batches = ['a', 'b', 'c', 'd'].map((id) => proposed(id, ['src/**']));
    const result = boundPlannerBatches(
      { batches: [proposed('none', ['nowhere/**']), ...batches] },
      bounds({ files: FILES, maxBatches: 2 }),
    );

    expect(result.batches.map((entry) => [entry.id, entry.goal])).toEqual([
      ['batch-001', 'goal of a'],
      ['batch-002', 'goal of b'],
    ]);
    expect(result.dropped).toEqual([
      'none: scope nowhere/** matches no file a patch may change',
      'c: over max_batches (2)',
      'd: over max_batches (2)',
    ]);
  });

  it('keeps planner batches no larger than the heuristic ones (at least three files): no scope over the whole repository', () => {
    const heuristic = [proposed('h1', ['src/a.ts']), proposed('h2', ['src/b.ts', 'src/util/c.ts'])];
    const response = {
      batches: [
        proposed('everything', ['**']),
        proposed('src', ['src/**']),
        proposed('tests', ['test/**']),
        proposed('three', ['src/a.ts', 'src/b.ts', 'src/util/c.ts']),
      ],
    };
    const result = boundPlannerBatches(response, bounds({ files: FILES, heuristic }));

    expect(result.batches.map((entry) => entry.goal)).toEqual(['goal of tests', 'goal of three']);
    expect(result.dropped).toEqual([
      'everything: scope ** covers 5 files; a batch covers at most 3',
      'src: scope src/** covers 4 files; a batch covers at most 3',
    ]);
    // A larger heuristic batch allows larger planner batches.
    const wide = boundPlannerBatches(response, bounds({ files: FILES, heuristic: [proposed('h', ['src/**'])] }));
    expect(wide.dropped).toEqual(['everything: scope ** covers 5 files; a batch covers at most 4']);
  });

  it('moves formatting batches first, and drops them when no formatter is configured', () => {
    const response = {
      batches: [proposed('r', ['src/a.ts']), proposed('fmt', ['src/**'], { allowed_operations: [FORMAT_OPERATION] })],
    };

    const withFormatter = boundPlannerBatches(response, bounds({ files: FILES, formatting: true }));
    expect(withFormatter.batches.map((entry) => [entry.id, entry.goal])).toEqual([
      ['batch-001', 'goal of fmt'],
      ['batch-002', 'goal of r'],
    ]);
    const without = boundPlannerBatches(response, bounds({ files: FILES }));
    expect(without.batches.map((entry) => entry.goal)).toEqual(['goal of r']);
    expect(without.dropped).toEqual(['fmt: a formatting batch, but no formatter is configured (refactor.formatter)']);
  });

  it('returns nothing for an empty response, so the heuristic plan stands', () => {
    expect(boundPlannerBatches({ batches: [] }, bounds({ files: FILES }))).toEqual({ batches: [], dropped: [] });
  });
});
