/**
 * Real editable installs for the tests of issue 11, finding 8: a virtual environment made by
 * Debian's python3 (`python3-venv`, with its `python3-setuptools`, `python3-wheel` and
 * `python3-pytest` seen through `--system-site-packages`: PyPI is not reachable, so nothing is
 * downloaded) and `pip install -e . --no-build-isolation --no-deps`. `.ci/run` installs those
 * packages; the suites check for them first (`toolchain('python3-venv')`) and are skipped with the
 * install command where they are missing.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const PYTHON = '/usr/bin/python3';
const INSTALL_HINT =
  "Install Debian's python3-venv, python3-setuptools, python3-wheel and python3-pytest (apt-get install python3-venv python3-setuptools python3-wheel python3-pytest).";

function run(file: string, args: string[], cwd: string): string {
  try {
    return execFileSync(file, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`\`${file} ${args.join(' ')}\` failed in ${cwd}: ${stderr.slice(-2000)}\n${INSTALL_HINT}`, {
      cause: error,
    });
  }
}

/** Creates `<project>/.venv` and installs the project there in editable mode, the modern way (PEP 660). */
export function editableInstall(project: string): string {
  run(PYTHON, ['-m', 'venv', '--system-site-packages', '.venv'], project);
  run(
    join(project, '.venv', 'bin', 'python'),
    ['-m', 'pip', 'install', '-q', '-e', '.', '--no-build-isolation', '--no-deps'],
    project,
  );
  return join(project, '.venv');
}

/** Creates `<project>/.venv` and runs the legacy `setup.py develop` there (`.egg-link` and `easy-install.pth`). */
export function developInstall(project: string): string {
  run(PYTHON, ['-m', 'venv', '--system-site-packages', '.venv'], project);
  run(join(project, '.venv', 'bin', 'python'), ['setup.py', '-q', 'develop'], project);
  return join(project, '.venv');
}

/** Creates an empty `<project>/.venv` (for files written by hand into its site-packages); returns site-packages. */
export function plainVenv(project: string): string {
  run(PYTHON, ['-m', 'venv', '--without-pip', '.venv'], project);
  const version = run(
    join(project, '.venv', 'bin', 'python'),
    ['-c', 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")'],
    project,
  ).trim();
  return join(project, '.venv', 'lib', `python${version}`, 'site-packages');
}
