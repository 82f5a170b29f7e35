/**
 * End to end: the `ratchet` executable (`dist/bundle/bin.js`, as installed) keeps Node's compile
 * cache in the user's cache directory, and leaves it alone when the user turns it off.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileCacheDirectory } from '../../src/cli/process-setup.js';
import { PACKAGE_ROOT, cliEnv } from '../support/run-cli.js';

const BIN = join(PACKAGE_ROOT, 'dist', 'bundle', 'bin.js');

describe('compile cache', () => {
  let home: string;

  beforeEach(async () => {
    home = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-compile-cache-')));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** `ratchet --version` with `home` as HOME and `$home/xdg` as the cache root. */
  async function version(extra: Record<string, string> = {}): Promise<string> {
    const result = await execa(process.execPath, [BIN, '--version'], {
      env: cliEnv({ HOME: home, XDG_CACHE_HOME: join(home, 'xdg'), ...extra }),
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    return result.stdout;
  }

  it('is written under $XDG_CACHE_HOME/ratchet by the first run and used by the next', async () => {
    const directory = join(home, 'xdg', 'ratchet', 'compile-cache');
    expect(directory).toBe(compileCacheDirectory({ XDG_CACHE_HOME: join(home, 'xdg') }, 'linux', home));
    await version();
    // One folder per Node version and V8 flags, holding a cache file per module.
    const [folder, ...others] = readdirSync(directory);
    expect(others).toEqual([]);
    const entries = readdirSync(join(directory, folder ?? ''));
    // `--version` loads the bundle's entry, `main.js` and the few chunks of the command table and
    // commander (commands are imported when they run): one cache file per file loaded.
    expect(entries.length).toBeGreaterThanOrEqual(3);
    expect(await version()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readdirSync(join(directory, folder ?? ''))).toEqual(entries);
  });

  it('is neither written nor read with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    await version({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(existsSync(join(home, 'xdg', 'ratchet'))).toBe(false);
  });

  it('goes to ~/.cache, macOS Caches or %LOCALAPPDATA% elsewhere', () => {
    expect(compileCacheDirectory({}, 'linux', '/home/u')).toBe('/home/u/.cache/ratchet/compile-cache');
    expect(compileCacheDirectory({ XDG_CACHE_HOME: 'relative' }, 'linux', '/home/u')).toBe(
      '/home/u/.cache/ratchet/compile-cache',
    );
    expect(compileCacheDirectory({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Caches/ratchet/compile-cache');
    expect(compileCacheDirectory({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32', 'C:\\Users\\u')).toMatch(
      /AppData.Local.ratchet.compile-cache$/,
    );
  });
});
