/**
 * Issue 11, finding 8: with the checkout's `.venv` linked into a run's worktree, an editable
 * install made the worktree's tests import the checkout's code. Real installs (setuptools'
 * PEP 660 `.pth` and finder, `setup.py develop`), and the files flit and hatchling write.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { editableInstallPaths, withPythonPath } from '../../src/verify/editable-installs.js';
import { developInstall, editableInstall, plainVenv } from '../support/python-venv.js';
import { toolchain } from '../support/toolchains.js';
import { makeProject } from './helpers.js';

const SETUPTOOLS = '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n';

/** A checkout and a "worktree" holding the same package, which says where it was imported from. */
async function checkoutAndWorktree(
  files: (who: string) => Record<string, string>,
): Promise<{ checkout: string; worktree: string }> {
  const checkout = await makeProject(files('checkout'));
  const worktree = await makeProject(files('worktree'));
  return { checkout, worktree };
}

/**
 * `import <module>` in the worktree, through its linked `.venv`, with and without the fix (`-P`:
 * without the current directory first on sys.path, as the `pytest` script runs).
 */
async function importedFrom(
  checkout: string,
  worktree: string,
  module: string,
): Promise<{ before: string; after: string }> {
  await symlink(path.join(checkout, '.venv'), path.join(worktree, '.venv'), 'dir');
  const paths = await editableInstallPaths(checkout, worktree, ['.venv', 'venv']);
  const command = `.venv/bin/python -P -c "import ${module}; print(${module}.WHO)"`;
  const plain = createProcessRunner();
  const spec = { command, cwd: worktree, env: { PYTHONPATH: undefined } };
  const before = (await plain.run(spec)).stdout.trim();
  const after = (await withPythonPath(plain, paths).run(spec)).stdout.trim();
  return { before, after };
}

/** Real installs need venv, pip and setuptools; the others write their files by hand. */
const venv = toolchain('python3-venv');

describe('editable installs point the worktree at its own code', () => {
  it.skipIf(venv.missing)(
    `setuptools, src layout: a .pth file holding the directory${venv.note}`,
    async () => {
      const { checkout, worktree } = await checkoutAndWorktree((who) => ({
        'pyproject.toml': `${SETUPTOOLS}[project]\nname = "calc"\nversion = "1.0"\n`,
        'src/calc/__init__.py': `WHO = "${who}"\n`,
      }));
      editableInstall(checkout);
      expect(await editableInstallPaths(checkout, worktree, ['.venv'])).toEqual([path.join(worktree, 'src')]);
      expect(await importedFrom(checkout, worktree, 'calc')).toEqual({ before: 'checkout', after: 'worktree' });
    },
    180_000,
  );

  it.skipIf(venv.missing)(
    `setuptools, flat layout: a finder module appended to sys.meta_path${venv.note}`,
    async () => {
      const { checkout, worktree } = await checkoutAndWorktree((who) => ({
        'pyproject.toml': `${SETUPTOOLS}[project]\nname = "calcflat"\nversion = "1.0"\n[tool.setuptools]\npackages = ["calcflat"]\n`,
        'calcflat/__init__.py': `WHO = "${who}"\n`,
      }));
      editableInstall(checkout);
      expect(await editableInstallPaths(checkout, worktree, ['.venv'])).toEqual([worktree]);
      expect(await importedFrom(checkout, worktree, 'calcflat')).toEqual({ before: 'checkout', after: 'worktree' });
    },
    180_000,
  );

  it.skipIf(venv.missing)(
    `setup.py develop: an .egg-link and easy-install.pth${venv.note}`,
    async () => {
      const { checkout, worktree } = await checkoutAndWorktree((who) => ({
        'setup.py':
          'from setuptools import setup\nsetup(name="calcegg", version="1.0", packages=["calcegg"], package_dir={"": "src"})\n',
        'src/calcegg/__init__.py': `WHO = "${who}"\n`,
      }));
      developInstall(checkout);
      expect(await importedFrom(checkout, worktree, 'calcegg')).toEqual({ before: 'checkout', after: 'worktree' });
    },
    180_000,
  );

  it('flit and hatchling: the .pth files they write (a directory each)', async () => {
    const { checkout, worktree } = await checkoutAndWorktree((who) => ({
      'calcfl.py': `WHO = "${who}"\n`,
      'src/calch/__init__.py': `WHO = "${who}"\n`,
    }));
    const site = plainVenv(checkout);
    // As flit_core 3/4 writes it (`<name>.pth`: the module's directory) and hatchling 1.x
    // (`_editable_impl_<name>.pth`: the package's parent), recorded from real installs.
    await writeFile(path.join(site, 'calcfl.pth'), checkout);
    await writeFile(path.join(site, '_editable_impl_calch.pth'), path.join(checkout, 'src'));
    expect(await importedFrom(checkout, worktree, 'calcfl')).toEqual({ before: 'checkout', after: 'worktree' });
    const fromHatch = await withPythonPath(
      createProcessRunner(),
      await editableInstallPaths(checkout, worktree, ['.venv']),
    ).run({
      command: '.venv/bin/python -P -c "import calch; print(calch.WHO)"',
      cwd: worktree,
      env: { PYTHONPATH: undefined },
    });
    expect(fromHatch.stdout.trim()).toBe('worktree');
  }, 180_000);

  it("hatchling's exact mode: the directories its editables finder maps", async () => {
    const checkout = await makeProject({ 'src/calch/__init__.py': '', 'single.py': '' });
    const worktree = await makeProject({ 'src/calch/__init__.py': '', 'single.py': '' });
    const site = path.join(checkout, '.venv', 'lib', 'python3.12', 'site-packages');
    await mkdir(site, { recursive: true });
    await writeFile(path.join(site, '_editable_impl_calch.pth'), 'import _editable_impl_calch');
    await writeFile(
      path.join(site, '_editable_impl_calch.py'),
      `from editables.redirector import RedirectingFinder as F\nF.install()\nF.map_module('calch', '${path.join(checkout, 'src/calch/__init__.py')}')\nF.map_module('single', '${path.join(checkout, 'single.py')}')`,
    );
    expect(await editableInstallPaths(checkout, worktree, ['.venv'])).toEqual([path.join(worktree, 'src'), worktree]);
  });

  it('adds nothing for installs elsewhere, and keeps a PYTHONPATH the command had', async () => {
    const checkout = await makeProject({ 'src/a/__init__.py': '' });
    const worktree = await makeProject({ 'src/a/__init__.py': '' });
    const site = path.join(checkout, '.venv', 'lib', 'python3.11', 'site-packages');
    await mkdir(site, { recursive: true });
    await writeFile(path.join(site, 'other.pth'), '/usr/lib/somewhere\n# a comment\nimport os\n');
    expect(await editableInstallPaths(checkout, worktree, ['.venv'])).toEqual([]);
    const echo = await withPythonPath(createProcessRunner(), ['/w/src']).run({
      command: 'echo "$PYTHONPATH"',
      cwd: worktree,
      env: { PYTHONPATH: '/mine' },
    });
    expect(echo.stdout.trim()).toBe('/w/src:/mine');
  });
});
