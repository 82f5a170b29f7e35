/**
 * How the `ratchet` executable sets up its Node.js process, before it loads anything else
 * (dependency-free: `bin.ts` runs it first). Measured on a cold index of 6,000 files in a fresh
 * process (bench/index.ts).
 *
 * - Node's on-disk compile cache: V8's bytecode for Ratchet's modules and its dependencies (the
 *   AI SDK, oxc's generated JavaScript, ...), written when a process ends and read by the next
 *   one, so a fresh `ratchet` does not parse and compile them again. It lives in a per-user
 *   directory, `$XDG_CACHE_HOME/ratchet/compile-cache` (default `~/.cache/...`;
 *   `~/Library/Caches/...` on macOS, `%LOCALAPPDATA%\...` on Windows), not Node's default under
 *   the shared temporary directory: V8 loads code from it, so only the user may write it, and the
 *   commands Ratchet runs for the model cannot (their sandbox hides `$HOME`).
 *   `NODE_COMPILE_CACHE=<dir>` chooses another directory and `NODE_DISABLE_COMPILE_CACHE=1`
 *   turns the cache off; Node handles both.
 */
import nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The compile cache's directory for this user and platform. */
export function compileCacheDirectory(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'ratchet', 'compile-cache');
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'ratchet', 'compile-cache');
  const xdg = env.XDG_CACHE_HOME;
  // The XDG specification ignores a relative path.
  return join(xdg?.startsWith('/') ? xdg : join(home, '.cache'), 'ratchet', 'compile-cache');
}

export interface ProcessSetupOptions {
  /** The compile cache's directory (default: `compileCacheDirectory` of this process). */
  compileCache?: string;
}

/** Sets this process up as the `ratchet` executable runs. Never fails: every setting is an optimisation. */
export function setUpProcess(options: ProcessSetupOptions = {}): void {
  enableCompileCache(options.compileCache ?? compileCacheDirectory(process.env, process.platform, homedir()));
}

function enableCompileCache(directory: string): void {
  // Node 22.8 and later; reached through the default export so an older Node still loads this file.
  const enable = (nodeModule as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    enable(directory);
  } catch {
    // An unusable directory only costs compile time.
  }
}
