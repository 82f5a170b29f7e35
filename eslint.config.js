// @ts-check
import tseslint from 'typescript-eslint';

/** Layers bottom-up as in ../shared/DESIGN.md: a layer may import only from layers before it. */
const LAYERS = [
  'core',
  'config',
  'git',
  'process',
  'verify',
  'code',
  'edit',
  'llm',
  'agent',
  'context',
  'ledger',
  'workflows',
  'engine',
  'report',
  'cli',
];

const layerRules = LAYERS.map((layer, index) => ({
  files: [`src/${layer}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: LAYERS.slice(index + 1).map((later) => ({
          group: [`**/${later}/*`, `**/${later}/**`],
          message: `Layer '${layer}' may not import from '${later}' (see DESIGN.md, Layers).`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'demo/**', 'coverage/**', '**/*.js', '!eslint.config.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  ...layerRules,
  { files: ['src/cli/**/*.{ts,tsx}', 'bench/**/*.ts', 'test/**/*.ts'], rules: { 'no-console': 'off' } },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
