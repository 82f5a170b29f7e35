import type { Framework } from '../../verify/detect.js';

/**
 * How the benchmark runs one language's official tests, as Aider's polyglot benchmark does:
 * the language's own runner, every skipped test enabled. `toolchain` names the programs that
 * must be installed (a missing one skips the language with a line saying so, never a silent zero).
 */
export interface LanguageSpec {
  name: string;
  /** Commands that must run (exit 0) for the language to be benchmarked, each a program and its arguments. */
  toolchain: readonly (readonly string[])[];
  framework: Framework;
  /** The test command, run in the exercise's worktree (`exercise`: its name, checked shell-safe). */
  testCommand(exercise: string): string;
  /** The official test file as the run restores it: skipped tests enabled. */
  enableSkipped(content: string): string;
  /** Whether the language needs the shared JavaScript dependencies (jest) linked in as `node_modules`. */
  jsDependencies: boolean;
}

const asIs = (content: string): string => content;

/** The languages of the published benchmark, by the name of their top folder. */
export const LANGUAGES: Readonly<Record<string, LanguageSpec>> = {
  python: {
    name: 'python',
    toolchain: [['pytest', '--version']],
    framework: 'pytest',
    testCommand: () => 'pytest',
    enableSkipped: asIs,
    jsDependencies: false,
  },
  javascript: {
    name: 'javascript',
    toolchain: [['node', '--version']],
    framework: 'jest',
    testCommand: () => 'node_modules/.bin/jest --ci',
    // Exercism's JavaScript track skips all but its first test (`xtest`); the benchmark runs all.
    enableSkipped: (content) => content.replace(/\bx(test|it|describe)\(/g, '$1('),
    jsDependencies: true,
  },
  rust: {
    name: 'rust',
    toolchain: [['cargo', '--version']],
    framework: 'cargo',
    testCommand: () => 'cargo test -- --include-ignored',
    enableSkipped: asIs,
    jsDependencies: false,
  },
  go: {
    name: 'go',
    toolchain: [['go', 'version']],
    framework: 'go',
    testCommand: () => 'go test ./...',
    enableSkipped: asIs,
    jsDependencies: false,
  },
  cpp: {
    name: 'cpp',
    toolchain: [
      ['cmake', '--version'],
      ['c++', '--version'],
      ['make', '--version'],
    ],
    framework: 'custom',
    // Exercism's CMakeLists.txt names its target after its folder, and the run's worktree is named
    // after the run: the build sees the worktree through a link named after the exercise.
    testCommand: (exercise) =>
      `mkdir -p .bench && ln -sfn .. .bench/${exercise} && cmake -S .bench/${exercise} -B build -DEXERCISM_RUN_ALL_TESTS=1 && cmake --build build`,
    enableSkipped: asIs,
    jsDependencies: false,
  },
  java: {
    name: 'java',
    toolchain: [['gradle', '--version']],
    framework: 'gradle',
    testCommand: () => 'gradle test --offline --console=plain',
    // Exercism's Java track disables all but its first test (`@Disabled("Remove to run test")`).
    enableSkipped: (content) => content.replace(/^\s*@Disabled\([^)]*\)\s*$\n?/gm, ''),
    jsDependencies: false,
  },
};
