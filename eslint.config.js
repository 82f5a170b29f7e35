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
  'bench',
  'cli',
];

/**
 * Imports forbidden whatever the order of LAYERS, stated on their own so that no reordering can
 * drop them: a workflow never imports the engine or the CLI; it gets what it needs through the
 * ports its definition receives (DESIGN.md, workflows/; src/workflows/definition.ts).
 * @type {Partial<Record<string, { layers: string[]; why: string }>>}
 */
const ALSO_FORBIDDEN = {
  workflows: {
    layers: ['engine', 'cli'],
    why: 'a workflow gets what it needs through the ports its definition receives (src/workflows/definition.ts)',
  },
};

const layerRules = LAYERS.map((layer, index) => ({
  files: [`src/${layer}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...(ALSO_FORBIDDEN[layer]?.layers ?? []).map((forbidden) => ({
            group: [`**/${forbidden}/*`, `**/${forbidden}/**`],
            message: `Layer '${layer}' may never import from '${forbidden}': ${ALSO_FORBIDDEN[layer]?.why ?? ''}.`,
          })),
          ...LAYERS.slice(index + 1)
            .filter((later) => !(ALSO_FORBIDDEN[layer]?.layers ?? []).includes(later))
            .map((later) => ({
              group: [`**/${later}/*`, `**/${later}/**`],
              message: `Layer '${layer}' may not import from '${later}' (see DESIGN.md, Layers).`,
            })),
        ],
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
