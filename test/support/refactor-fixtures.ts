/**
 * Fixture repositories for the end-to-end tests of `ratchet refactor`: a multi-module
 * TypeScript project tested with `node --test` (Node 24 strips the types of `.ts` files itself,
 * so nothing is installed) and a Python package tested with pytest. Each holds what the
 * heuristic planner looks for: an unused private function (dead code), a function longer than 50
 * lines, and a module other modules import that no test covers.
 *
 * The patches the scripted patcher answers with are real `git diff` output: `scriptPatches`
 * copies a fixture into a scratch repository, applies each batch's edits in turn (the bad
 * variants on top of the state the batch starts from, then the good one, which is committed),
 * and records the diffs.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type FileMap = Record<string, string>;

/** Edits of one file: its new content from the old one (`null`: the file does not exist yet). */
export type Edit = (text: string | null) => string;
export type Edits = Record<string, Edit>;

/** One replacement that must match exactly once. */
export function replaceOnce(search: string, replacement: string): Edit {
  return (text) => {
    if (text === null) throw new Error(`cannot replace in a missing file: ${search.slice(0, 60)}`);
    const first = text.indexOf(search);
    if (first < 0 || text.indexOf(search, first + 1) >= 0)
      throw new Error(`'${search.slice(0, 60)}' must occur exactly once`);
    return text.slice(0, first) + replacement + text.slice(first + search.length);
  };
}

export function newFile(content: string): Edit {
  return (text) => {
    if (text !== null) throw new Error('the file already exists');
    return content;
  };
}

/** Several edits of one file, in order. */
export function chain(...edits: Edit[]): Edit {
  return (text) => edits.reduce<string | null>((current, edit) => edit(current), text) ?? '';
}

export interface PatchStep {
  /** Label of the batch (e.g. `batch-001`), for the result's keys. */
  batch: string;
  /** Patches that are proposed and must not land, each diffed against the batch's start. */
  bad?: Record<string, Edits>;
  /** The patch that lands (committed before the next step). */
  good: Edits;
}

export interface ScriptedPatch {
  diff: string;
  files: string[];
}

/** `patches[batch].good`, `patches[batch][badName]`. */
export type ScriptedPatches = Record<string, Record<string, ScriptedPatch>>;

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'f@example.com',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'f@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
}

export async function writeFiles(dir: string, files: FileMap): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const file = join(dir, name);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

async function applyEdits(dir: string, edits: Edits): Promise<void> {
  for (const [name, edit] of Object.entries(edits)) {
    const file = join(dir, name);
    let text: string | null;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      text = null;
    }
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, edit(text));
  }
}

/** The diff of `edits` against HEAD of `dir`, then back to HEAD. */
async function diffOf(dir: string, edits: Edits): Promise<ScriptedPatch> {
  await applyEdits(dir, edits);
  git(dir, 'add', '-A');
  const diff = git(dir, 'diff', '--cached');
  const files = git(dir, 'diff', '--cached', '--name-only').split('\n').filter(Boolean);
  git(dir, 'reset', '--quiet', '--hard', 'HEAD');
  git(dir, 'clean', '-fdq');
  if (diff.trim() === '') throw new Error(`edits of ${Object.keys(edits).join(', ')} change nothing`);
  return { diff, files };
}

/** The files of the fixture after every step's good edits (what the run's tip should hold). */
export async function scriptPatches(
  files: FileMap,
  steps: readonly PatchStep[],
): Promise<{ patches: ScriptedPatches; final: FileMap }> {
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-patches-'));
  try {
    git(dir, 'init', '--quiet', '--initial-branch=main');
    await writeFiles(dir, files);
    git(dir, 'add', '-A');
    git(dir, 'commit', '--quiet', '--no-gpg-sign', '-m', 'fixture');
    const patches: ScriptedPatches = {};
    const final: FileMap = { ...files };
    for (const step of steps) {
      const entry: Record<string, ScriptedPatch> = {};
      for (const [name, edits] of Object.entries(step.bad ?? {})) entry[name] = await diffOf(dir, edits);
      entry.good = await diffOf(dir, step.good);
      await applyEdits(dir, step.good);
      for (const name of Object.keys(step.good)) final[name] = await readFile(join(dir, name), 'utf8');
      git(dir, 'add', '-A');
      git(dir, 'commit', '--quiet', '--no-gpg-sign', '-m', step.batch);
      patches[step.batch] = entry;
    }
    return { patches, final };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const lines = (...text: string[]): string => `${text.join('\n')}\n`;

// ---------------------------------------------------------------------------------------------
// TypeScript: src/math.ts <- src/invoice.ts <- src/report.ts <- src/index.ts, tests for math and
// invoice under test/, run by `node --test` on the .ts files directly.

/** `renderInvoice` is 60+ lines: the size checker's "long function" finding. */
const INVOICE_TS = lines(
  "import { add, multiply } from './math.ts';",
  '',
  'export interface InvoiceLine {',
  '  sku: string;',
  '  quantity: number;',
  '  unitPrice: number;',
  '}',
  '',
  'export interface Invoice {',
  '  customer: string;',
  '  lines: InvoiceLine[];',
  '  discountPercent: number;',
  '}',
  '',
  '/** The invoice as plain text: one row per line, then the totals. */',
  'export function renderInvoice(invoice: Invoice): string {',
  '  const out: string[] = [];',
  '  out.push(`Invoice for ${invoice.customer}`);',
  "  out.push('='.repeat(20));",
  '  let subtotal = 0;',
  '  let items = 0;',
  '  for (const line of invoice.lines) {',
  '    const amount = multiply(line.quantity, line.unitPrice);',
  '    subtotal = add(subtotal, amount);',
  '    items = add(items, line.quantity);',
  '    const sku = line.sku.padEnd(8);',
  '    const quantity = String(line.quantity).padStart(3);',
  '    const price = line.unitPrice.toFixed(2).padStart(8);',
  '    const total = amount.toFixed(2).padStart(9);',
  '    out.push(`${sku}${quantity} x${price} =${total}`);',
  '  }',
  "  out.push('-'.repeat(20));",
  '  const discount = (subtotal * invoice.discountPercent) / 100;',
  '  const net = subtotal - discount;',
  '  const tax = Math.round(net * 0.2 * 100) / 100;',
  '  const gross = add(net, tax);',
  '  out.push(`Items:    ${items}`);',
  '  out.push(`Subtotal: ${subtotal.toFixed(2)}`);',
  '  if (discount > 0) {',
  '    out.push(`Discount: ${discount.toFixed(2)}`);',
  '  }',
  '  out.push(`Net:      ${net.toFixed(2)}`);',
  '  out.push(`Tax:      ${tax.toFixed(2)}`);',
  '  out.push(`Total:    ${gross.toFixed(2)}`);',
  '  if (gross > 1000) {',
  "    out.push('Large order: payment due in 14 days.');",
  '  } else {',
  "    out.push('Payment due in 30 days.');",
  '  }',
  '  if (invoice.lines.length === 0) {',
  "    out.push('(no lines)');",
  '  }',
  '  const notes: string[] = [];',
  '  for (const line of invoice.lines) {',
  '    if (line.quantity > 10) {',
  '      notes.push(`bulk: ${line.sku}`);',
  '    }',
  '    if (line.unitPrice === 0) {',
  '      notes.push(`free: ${line.sku}`);',
  '    }',
  '  }',
  '  if (notes.length > 0) {',
  "    out.push('Notes:');",
  '    for (const note of notes) {',
  '      out.push(`  ${note}`);',
  '    }',
  '  }',
  "  out.push('Thank you for your order.');",
  "  return out.join('\\n');",
  '}',
);

export const TS_FILES: FileMap = {
  'package.json': `${JSON.stringify({ name: 'shop', private: true, type: 'module', scripts: { test: 'node --test "test/**/*.test.ts"' } }, null, 2)}\n`,
  'README.md': '# shop\n\nA small invoicing library.\n',
  '.gitignore': 'node_modules/\n',
  'src/math.ts': lines(
    'export function add(a: number, b: number): number {',
    '  return a + b;',
    '}',
    '',
    'export function multiply(a: number, b: number): number {',
    '  return a * b;',
    '}',
    '',
    '/** Left over from the old rounding rules; nothing calls it any more. */',
    'function legacyRound(value: number): number {',
    '  return Math.floor(value * 100 + 0.5) / 100;',
    '}',
  ),
  'src/invoice.ts': INVOICE_TS,
  'src/report.ts': lines(
    "import { renderInvoice, type Invoice } from './invoice.ts';",
    '',
    '/** One summary line per invoice and the number of invoices. */',
    'export function summarize(invoices: Invoice[]): string {',
    '  const rows = invoices.map((invoice) => {',
    "    const last = renderInvoice(invoice).split('\\n').filter((row) => row.startsWith('Total:')).pop();",
    "    return `${invoice.customer}: ${last?.replace('Total:', '').trim() ?? '0.00'}`;",
    '  });',
    "  return [...rows, `${invoices.length} invoice(s)`].join('\\n');",
    '}',
  ),
  'src/index.ts': lines(
    "export { add, multiply } from './math.ts';",
    "export { renderInvoice } from './invoice.ts';",
    "export { summarize } from './report.ts';",
  ),
  'scripts/load-check.mjs': lines("await import('../src/index.ts');"),
  'test/math.test.ts': lines(
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { add, multiply } from '../src/math.ts';",
    '',
    "test('add', () => {",
    '  assert.equal(add(2, 3), 5);',
    '});',
    '',
    "test('multiply', () => {",
    '  assert.equal(multiply(4, 2.5), 10);',
    '});',
  ),
  'test/invoice.test.ts': lines(
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { renderInvoice } from '../src/invoice.ts';",
    '',
    "test('renders the lines and the totals', () => {",
    "  const text = renderInvoice({ customer: 'ACME', discountPercent: 10, lines: [{ sku: 'bolt', quantity: 12, unitPrice: 1.5 }, { sku: 'nut', quantity: 2, unitPrice: 4 }] });",
    '  assert.match(text, /^Invoice for ACME/);',
    '  assert.match(text, /bolt     12 x    1\\.50 =    18\\.00/);',
    '  assert.match(text, /Subtotal: 26\\.00/);',
    '  assert.match(text, /Discount: 2\\.60/);',
    '  assert.match(text, /Total:    28\\.08/);',
    '  assert.match(text, /bulk: bolt/);',
    '});',
  ),
};

/**
 * The fast verifier: the unit tests. The full one adds a load check of the entry point, by a
 * script (a file a verifier command names is never patched or planned; the entry point is).
 */
export function tsVerifiers(node: string): { fast: string[]; full: string[] } {
  const test = `"${node}" --test "test/**/*.test.ts"`;
  return { fast: [test], full: [test, `"${node}" scripts/load-check.mjs`] };
}

/** The scripted batches of the TypeScript run (see test/e2e/refactor-typescript.test.ts). */
export const TS_STEPS: PatchStep[] = [
  {
    batch: 'batch-001',
    bad: {
      // Also "tidies" src/invoice.ts, outside the batch's scope: the admission checks refuse it.
      outOfScope: {
        'src/math.ts': replaceOnce(
          '\n/** Left over from the old rounding rules; nothing calls it any more. */\nfunction legacyRound(value: number): number {\n  return Math.floor(value * 100 + 0.5) / 100;\n}\n',
          '',
        ),
        'src/invoice.ts': replaceOnce(
          '/** The invoice as plain text: one row per line, then the totals. */',
          '/** The invoice as plain text. */',
        ),
      },
    },
    good: {
      'src/math.ts': replaceOnce(
        '\n/** Left over from the old rounding rules; nothing calls it any more. */\nfunction legacyRound(value: number): number {\n  return Math.floor(value * 100 + 0.5) / 100;\n}\n',
        '',
      ),
    },
  },
  {
    batch: 'batch-002',
    bad: {
      // Extracts the row formatting but drops the padding of the quantity: the tests fail.
      breaksTests: {
        'src/invoice.ts': chain(
          replaceOnce(
            '    const sku = line.sku.padEnd(8);\n    const quantity = String(line.quantity).padStart(3);\n    const price = line.unitPrice.toFixed(2).padStart(8);\n    const total = amount.toFixed(2).padStart(9);\n    out.push(`${sku}${quantity} x${price} =${total}`);\n',
            '    out.push(formatRow(line, amount));\n',
          ),
          replaceOnce(
            '/** The invoice as plain text: one row per line, then the totals. */',
            'function formatRow(line: InvoiceLine, amount: number): string {\n  return `${line.sku.padEnd(8)}${line.quantity} x${line.unitPrice.toFixed(2).padStart(8)} =${amount.toFixed(2).padStart(9)}`;\n}\n\n/** The invoice as plain text: one row per line, then the totals. */',
          ),
        ),
      },
    },
    good: {
      'src/invoice.ts': chain(
        replaceOnce(
          '    const sku = line.sku.padEnd(8);\n    const quantity = String(line.quantity).padStart(3);\n    const price = line.unitPrice.toFixed(2).padStart(8);\n    const total = amount.toFixed(2).padStart(9);\n    out.push(`${sku}${quantity} x${price} =${total}`);\n',
          '    out.push(formatRow(line, amount));\n',
        ),
        replaceOnce(
          '/** The invoice as plain text: one row per line, then the totals. */',
          '/** One invoice row: sku, quantity, unit price and amount in fixed columns. */\nfunction formatRow(line: InvoiceLine, amount: number): string {\n  const sku = line.sku.padEnd(8);\n  const quantity = String(line.quantity).padStart(3);\n  const price = line.unitPrice.toFixed(2).padStart(8);\n  const total = amount.toFixed(2).padStart(9);\n  return `${sku}${quantity} x${price} =${total}`;\n}\n\n/** The invoice as plain text: one row per line, then the totals. */',
        ),
      ),
    },
  },
  {
    batch: 'batch-003',
    good: {
      'test/report.test.ts': newFile(
        lines(
          "import assert from 'node:assert/strict';",
          "import { test } from 'node:test';",
          "import { summarize } from '../src/report.ts';",
          '',
          "test('summarize lists each customer total and the count', () => {",
          "  const text = summarize([{ customer: 'ACME', discountPercent: 0, lines: [{ sku: 'nut', quantity: 2, unitPrice: 5 }] }]);",
          "  assert.equal(text, 'ACME: 12.00\\n1 invoice(s)');",
          '});',
        ),
      ),
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Python: shop/util.py <- shop/pricing.py <- shop/report.py <- shop/cli.py, pytest tests for
// util and pricing under tests/.

const PRICING_PY = lines(
  'from shop.util import clamp, percent',
  '',
  '',
  'def quote(items, discount_percent=0):',
  '    """A price quote as text: one row per item, then the totals."""',
  '    rows = []',
  '    rows.append("Quote")',
  '    rows.append("=" * 20)',
  '    subtotal = 0.0',
  '    count = 0',
  '    for sku, quantity, unit_price in items:',
  '        amount = quantity * unit_price',
  '        subtotal += amount',
  '        count += quantity',
  '        name = sku.ljust(8)',
  '        qty = str(quantity).rjust(3)',
  '        price = f"{unit_price:.2f}".rjust(8)',
  '        total = f"{amount:.2f}".rjust(9)',
  '        rows.append(f"{name}{qty} x{price} ={total}")',
  '    rows.append("-" * 20)',
  '    discount_percent = clamp(discount_percent, 0, 50)',
  '    discount = percent(subtotal, discount_percent)',
  '    net = subtotal - discount',
  '    tax = round(net * 0.2, 2)',
  '    gross = net + tax',
  '    rows.append(f"Items:    {count}")',
  '    rows.append(f"Subtotal: {subtotal:.2f}")',
  '    if discount > 0:',
  '        rows.append(f"Discount: {discount:.2f}")',
  '    rows.append(f"Net:      {net:.2f}")',
  '    rows.append(f"Tax:      {tax:.2f}")',
  '    rows.append(f"Total:    {gross:.2f}")',
  '    if gross > 1000:',
  '        rows.append("Large order: valid for 7 days.")',
  '    else:',
  '        rows.append("Valid for 30 days.")',
  '    if not items:',
  '        rows.append("(no items)")',
  '    notes = []',
  '    for sku, quantity, unit_price in items:',
  '        if quantity > 10:',
  '            notes.append(f"bulk: {sku}")',
  '        if unit_price == 0:',
  '            notes.append(f"free: {sku}")',
  '    if notes:',
  '        rows.append("Notes:")',
  '        for note in notes:',
  '            rows.append(f"  {note}")',
  '    rows.append("Prices in EUR.")',
  '    rows.append("Thank you.")',
  '    footer = []',
  '    footer.append("-" * 20)',
  '    footer.append("shop quote engine")',
  '    rows.extend(footer)',
  '    return "\\n".join(rows)',
);

export const PY_FILES: FileMap = {
  'README.md': '# shop (Python)\n',
  '.gitignore': '__pycache__/\n.pytest_cache/\n',
  'pytest.ini': lines('[pytest]', 'testpaths = tests', 'addopts = -p no:cacheprovider'),
  'shop/__init__.py': '',
  'shop/util.py': lines(
    'def clamp(value, low, high):',
    '    """value limited to [low, high]."""',
    '    return max(low, min(high, value))',
    '',
    '',
    'def percent(amount, rate):',
    '    return amount * rate / 100',
    '',
    '',
    'def _legacy_pad(text, width):',
    '    """Left over from the old report layout; nothing calls it."""',
    '    return text + " " * (width - len(text))',
  ),
  'shop/pricing.py': PRICING_PY,
  'shop/report.py': lines(
    'from shop.pricing import quote',
    '',
    '',
    'def summary(orders):',
    '    """One line per customer with the quoted total, then the count."""',
    '    rows = []',
    '    for customer, items in orders:',
    '        total = [row for row in quote(items).split("\\n") if row.startswith("Total:")][-1]',
    "        rows.append(f\"{customer}: {total.replace('Total:', '').strip()}\")",
    '    rows.append(f"{len(orders)} order(s)")',
    '    return "\\n".join(rows)',
  ),
  'shop/cli.py': lines(
    'import sys',
    '',
    'from shop.report import summary',
    '',
    '',
    'def main():',
    '    print(summary([("cli", [("demo", 1, 1.0)])]))',
    '    return 0',
    '',
    '',
    'if __name__ == "__main__":',
    '    sys.exit(main())',
  ),
  'tests/__init__.py': '',
  'tests/test_util.py': lines(
    'from shop.util import clamp, percent',
    '',
    '',
    'def test_clamp():',
    '    assert clamp(70, 0, 50) == 50',
    '    assert clamp(-1, 0, 50) == 0',
    '',
    '',
    'def test_percent():',
    '    assert percent(200, 10) == 20',
  ),
  'tests/test_pricing.py': lines(
    'from shop.pricing import quote',
    '',
    '',
    'def test_quote_rows_and_totals():',
    '    text = quote([("bolt", 12, 1.5), ("nut", 2, 4.0)], discount_percent=10)',
    '    assert text.startswith("Quote")',
    '    assert "bolt     12 x    1.50 =    18.00" in text',
    '    assert "Subtotal: 26.00" in text',
    '    assert "Discount: 2.60" in text',
    '    assert "Total:    28.08" in text',
    '    assert "bulk: bolt" in text',
  ),
};

export const PYTHON = '/usr/bin/python3';

/** `-B`: no bytecode files, so a verifier run leaves the tree as it found it. */
export function pyVerifiers(): { fast: string[]; full: string[] } {
  const test = `${PYTHON} -B -m pytest -q`;
  return { fast: [test], full: [test, `${PYTHON} -B -c "import shop.cli"`] };
}

const LEGACY_PAD =
  '\n\ndef _legacy_pad(text, width):\n    """Left over from the old report layout; nothing calls it."""\n    return text + " " * (width - len(text))\n';

/** Fifty lines of docstring: inside the scope, but far over the batch's diff budget. */
const CHATTY_DOC = lines(
  '',
  '',
  '"""Helpers of the shop package.',
  '',
  ...Array.from({ length: 50 }, (_, index) => `Note ${index + 1}: numbers are plain floats.`),
  '"""',
);

const ROW_BLOCK =
  '        name = sku.ljust(8)\n        qty = str(quantity).rjust(3)\n        price = f"{unit_price:.2f}".rjust(8)\n        total = f"{amount:.2f}".rjust(9)\n        rows.append(f"{name}{qty} x{price} ={total}")\n';

export const PY_STEPS: PatchStep[] = [
  {
    batch: 'batch-001',
    bad: {
      // Removes the dead code, and adds a 50-line docstring: over the diff budget.
      overBudget: { 'shop/util.py': chain(replaceOnce(LEGACY_PAD, ''), (text) => `${text}${CHATTY_DOC}`) },
    },
    good: { 'shop/util.py': replaceOnce(LEGACY_PAD, '') },
  },
  {
    batch: 'batch-002',
    bad: {
      // Extracts the row formatting, but pads the sku to 6: the quote test fails.
      breaksTests: {
        'shop/pricing.py': chain(
          replaceOnce(ROW_BLOCK, '        rows.append(_row(sku, quantity, unit_price, amount))\n'),
          replaceOnce(
            '\n\ndef quote(',
            '\n\ndef _row(sku, quantity, unit_price, amount):\n    return f"{sku.ljust(6)}{str(quantity).rjust(3)} x{unit_price:8.2f} ={amount:9.2f}"\n\n\ndef quote(',
          ),
        ),
      },
    },
    good: {
      'shop/pricing.py': chain(
        replaceOnce(ROW_BLOCK, '        rows.append(_row(sku, quantity, unit_price, amount))\n'),
        replaceOnce(
          '\n\ndef quote(',
          '\n\ndef _row(sku, quantity, unit_price, amount):\n    """One quote row in fixed columns."""\n    return f"{sku.ljust(8)}{str(quantity).rjust(3)} x{unit_price:8.2f} ={amount:9.2f}"\n\n\ndef quote(',
        ),
      ),
    },
  },
  {
    batch: 'batch-003',
    good: {
      'tests/test_report.py': newFile(
        lines(
          'from shop.report import summary',
          '',
          '',
          'def test_summary_totals_and_count():',
          '    text = summary([("acme", [("nut", 2, 5.0)])])',
          '    assert text == "acme: 12.00\\n1 order(s)"',
        ),
      ),
    },
  },
];
