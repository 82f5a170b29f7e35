/**
 * Whether a mypy configuration names what to check (`files`, `packages` or `modules`). Then the
 * command is plain `mypy`: `mypy .` would override that list and check every Python file of the
 * tree instead (tests, docs, typing fixtures meant to fail), as with attrs's `[tool.mypy] files`.
 */
import { parse } from 'smol-toml';
import { z } from 'zod';

const TARGETS = /^(?:files|packages|modules)\s*[=:]\s*(.*)$/;

const nonEmpty = z.union([z.string().trim().min(1), z.array(z.unknown()).min(1)]);
const PyprojectMypySchema = z.looseObject({
  tool: z.looseObject({
    mypy: z.looseObject({}),
  }),
});

/** `pyproject.toml`'s `[tool.mypy]`: a non-empty `files`, `packages` or `modules`. */
export function pyprojectMypyNamesTargets(text: string): boolean {
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    // A pyproject.toml mypy could not read either: the section's lines are the best guess.
    return sectionNamesTargets(text, /^\[tool\.mypy\]\s*$/);
  }
  const parsed = PyprojectMypySchema.safeParse(document);
  if (!parsed.success) return false;
  const mypy = parsed.data.tool.mypy;
  return ['files', 'packages', 'modules'].some((key) => nonEmpty.safeParse(mypy[key]).success);
}

/** `mypy.ini`, `.mypy.ini` or `setup.cfg`: `files = ...` (or `packages`, `modules`) in `[mypy]`. */
export function iniMypyNamesTargets(text: string): boolean {
  return sectionNamesTargets(text, /^\[mypy\]\s*$/);
}

/** A target key in the section: its value on the same line or on indented lines below (INI). */
function sectionNamesTargets(text: string, header: RegExp): boolean {
  const lines = text.split(/\r?\n/);
  let inSection = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith('[')) {
      inSection = header.test(line);
      continue;
    }
    const value = inSection ? TARGETS.exec(line)?.[1] : undefined;
    if (value === undefined) continue;
    if (!/^(?:""|''|\[\s*\])?\s*(?:[#;].*)?$/.test(value.trim())) return true;
    if (/^\s+\S/.test(lines[index + 1] ?? '')) return true;
  }
  return false;
}
