import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'smol-toml';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import type { CargoScope, CargoTarget } from './parsers/cargo-text.js';

/*
 * In a Cargo workspace every crate's unit tests run as `Running unittests src/lib.rs`: the
 * source is relative to the crate, so two crates' `tests::it_works` would share an id. The
 * scope of a member's target becomes its path from the workspace root (`a/src/lib.rs`), found
 * by looking for the source in the members' directories. A single crate (no `[workspace]`)
 * keeps `src/lib.rs`, so its ids do not change.
 */

const manifestSchema = z.looseObject({
  package: z.looseObject({ name: z.string() }).optional(),
  lib: z.looseObject({ name: z.string().optional() }).optional(),
  workspace: z
    .looseObject({
      members: z.array(z.string()).optional(),
      exclude: z.array(z.string()).optional(),
    })
    .optional(),
});
type Manifest = z.infer<typeof manifestSchema>;

interface Member {
  /** POSIX path from the workspace root; '' for the root package. */
  dir: string;
  /** Crate names of its lib and bins (`-` as `_`, as cargo names the test binaries). */
  crates: Set<string>;
}

/**
 * The scope of each target (in order) when `root` (where cargo ran) is a workspace; undefined
 * for a single crate, or when the manifest cannot be read.
 */
export async function cargoScopes(root: string, targets: CargoTarget[]): Promise<CargoScope[] | undefined> {
  const manifest = await readManifest(path.join(root, 'Cargo.toml'));
  if (manifest?.workspace === undefined) return undefined;
  const members = await workspaceMembers(root, manifest);
  const scopes: CargoScope[] = [];
  let previous: Member | undefined;
  for (const { source, crate } of targets) {
    if (source.startsWith('doc-tests ') || path.isAbsolute(source)) {
      scopes.push({ scope: source, file: source });
      continue;
    }
    const candidates = members.filter((member) => existsSync(path.join(root, member.dir, source)));
    const byCrate = candidates.filter((member) => crate !== undefined && member.crates.has(crate));
    // Cargo runs a package's test binaries together (lib, bins, then tests/*.rs): an integration
    // test that several members have belongs to the package whose binaries ran just before.
    const chosen =
      candidates.length === 1
        ? candidates[0]
        : byCrate.length === 1
          ? byCrate[0]
          : previous !== undefined && candidates.includes(previous)
            ? previous
            : undefined;
    if (chosen === undefined) {
      const scope = crate === undefined ? source : `${crate}::${source}`;
      scopes.push({ scope, file: source });
      continue;
    }
    previous = chosen;
    const file = chosen.dir === '' ? source : path.posix.join(chosen.dir, source);
    scopes.push({ scope: file, file });
  }
  return scopes;
}

async function workspaceMembers(root: string, manifest: Manifest): Promise<Member[]> {
  const members: Member[] = [];
  if (manifest.package !== undefined) members.push({ dir: '', crates: cratesOf(manifest) });
  const patterns = (manifest.workspace?.members ?? []).map((member) => `${member.replace(/\/+$/, '')}/Cargo.toml`);
  if (patterns.length === 0) return members;
  const excluded = new Set((manifest.workspace?.exclude ?? []).map((dir) => path.posix.normalize(dir)));
  const files = await glob(patterns, { cwd: root, ignore: ['**/target/**', '**/node_modules/**'] });
  for (const file of files.sort()) {
    const dir = path.posix.dirname(file);
    if (dir === '.' || excluded.has(dir)) continue;
    const member = await readManifest(path.join(root, file));
    if (member?.package !== undefined) members.push({ dir, crates: cratesOf(member) });
  }
  return members;
}

function cratesOf(manifest: Manifest): Set<string> {
  const names = [manifest.lib?.name, manifest.package?.name].filter((name): name is string => name !== undefined);
  return new Set(names.map((name) => name.replaceAll('-', '_')));
}

async function readManifest(file: string): Promise<Manifest | undefined> {
  try {
    const parsed = manifestSchema.safeParse(parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
