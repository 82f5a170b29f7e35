/**
 * What every git process Ratchet starts runs with, so that it never runs a program the
 * repository names. The worktree and anything nested in it (a repository the agent made, a
 * gitlink's checkout) are the model's; their config, hooks and attributes are untrusted, and git
 * runs outside the sandbox. Measured with git 2.39 (test/git/hardening.test.ts): with these,
 * status, add, commit, notes, reset, clean, checkout, merge, diff, log, cat-file, ls-tree, apply,
 * bundle and worktree commands start nothing from the worktree's or a nested repository's config
 * or hooks.
 *
 * Command-line `-c` settings win over every config file, and git hands them on to the git
 * processes it starts itself (`GIT_CONFIG_PARAMETERS`), in submodules too.
 *
 * Not closable this way, and why it is safe: filter, diff and merge drivers are chosen by
 * `.gitattributes` (the model's) but defined in config (`filter.<name>.clean`), under names we
 * cannot list. Ratchet's git reads only the user's own config (the sandbox keeps `.git`
 * read-only), and never enters a nested repository: `diff.ignoreSubmodules=all` keeps status and
 * diff out of gitlinks. `git add` does enter a checked-out gitlink (it asks `git status` there),
 * so the workflows refuse gitlinks and nested repositories before anything is staged.
 */

/** `-c` settings, each with what it closes. */
const HARDENED_CONFIG: ReadonlyArray<readonly [key: string, value: string, closes: string]> = [
  ['core.fsmonitor', 'false', 'the fsmonitor hook, run on every index refresh (status, add, diff, commit, reset)'],
  [
    'core.hooksPath',
    '/dev/null',
    "every hook (pre-commit, post-checkout, reference-transaction, post-index-change...): the user's, and a nested repository's",
  ],
  ['core.pager', 'cat', 'a pager (output goes to a pipe, but a config may force one)'],
  ['diff.external', '', 'an external diff program (diffs also pass --no-ext-diff)'],
  [
    'diff.ignoreSubmodules',
    'all',
    "status and diff running `git status` inside each checked-out gitlink, under that repository's config",
  ],
  ['status.submoduleSummary', 'false', '`git log` inside gitlinks for the status summary'],
  ['submodule.recurse', 'false', 'checkout, reset and merge recursing into submodules'],
  ['fetch.recurseSubmodules', 'false', 'fetch recursing into submodules'],
  [
    'protocol.allow',
    'never',
    'every transport (ext:: runs a command; url.<x>.insteadOf could turn a path into one); GIT_ALLOW_PROTOCOL below overrides it',
  ],
  ['core.sshCommand', '', 'a configured ssh command (no transport is allowed anyway)'],
  ['core.gitProxy', '', 'a git:// proxy command'],
  ['core.askPass', '', 'a password prompt program'],
  ['credential.helper', '', 'credential helpers (an empty value clears the list)'],
  ['commit.gpgSign', 'false', 'gpg.program for signing commits (merges and notes included)'],
  ['tag.gpgSign', 'false', 'gpg.program for signing tags'],
  ['log.showSignature', 'false', 'gpg.program for verifying signatures in log'],
  ['merge.verifySignatures', 'false', 'gpg.program for verifying the merged commits'],
  [
    'maintenance.auto',
    'false',
    '`git maintenance run --auto` after every commit, merge and note: one more process each (a tasks run makes hundreds), and a gc of the shared object store while worktrees use it',
  ],
];

/**
 * Environment variables set for every git process; `undefined` removes one inherited from
 * Ratchet's own environment.
 */
export const HARDENED_ENV: Readonly<Record<string, string | undefined>> = {
  // Never wait on a terminal for credentials.
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  // Commands that would open an editor get one that does nothing.
  GIT_EDITOR: ':',
  GIT_SEQUENCE_EDITOR: ':',
  // No transport at all (it overrides protocol.* config); the bundle restore allows `file`.
  GIT_ALLOW_PROTOCOL: '',
  GIT_PROTOCOL_FROM_USER: '0',
  // Programs named by the environment: diffs stay plain, no ssh, no prompts.
  GIT_EXTERNAL_DIFF: undefined,
  GIT_DIFF_OPTS: undefined,
  GIT_SSH: undefined,
  GIT_SSH_COMMAND: undefined,
  GIT_PROXY_COMMAND: undefined,
  GIT_ASKPASS: undefined,
  SSH_ASKPASS: undefined,
};

// Built once: every git process Ratchet starts takes them (a tasks run starts hundreds).
const CONFIG_ARGS: readonly string[] = HARDENED_CONFIG.flatMap(([key, value]) => ['-c', `${key}=${value}`]);

/** The `-c key=value` arguments that go before the git subcommand. */
export function hardenedConfigArgs(): string[] {
  return [...CONFIG_ARGS];
}

const SHELL_PREAMBLE = `git() { command git ${CONFIG_ARGS.map((arg) => `'${arg}'`).join(' ')} "$@"; }`;

/**
 * A `/bin/sh` preamble that makes every `git` in the script the hardened one. The arguments are
 * single-quoted; none of them contains a quote.
 */
export function hardenedShellPreamble(): string {
  return SHELL_PREAMBLE;
}
