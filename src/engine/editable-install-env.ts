import { withPythonPath } from '../verify/editable-installs.js';
import type { ToolSandbox } from './tool-sandbox.js';
import { SHARED_DIRECTORIES } from './worktree-setup.js';

/** The shared dependency folders that are Python virtual environments. */
export const PYTHON_ENVIRONMENTS = SHARED_DIRECTORIES.filter((name) => name !== 'node_modules');

/**
 * The run's sandbox with the worktree's counterparts of the checkout's editable installs first on
 * `PYTHONPATH` for every command (the agent's Bash, the Claude Code CLI, tests, lint, verifiers):
 * the code under test is the worktree's, not the checkout's (see `editableInstallPaths`).
 */
export function withEditableInstalls(sandbox: ToolSandbox, paths: readonly string[]): ToolSandbox {
  if (paths.length === 0) return sandbox;
  return {
    ...sandbox,
    runner: withPythonPath(sandbox.runner, paths),
    claudeRunner: withPythonPath(sandbox.claudeRunner, paths),
  };
}
