// One lint setup for the repository: typescript-eslint's type-checked recommended rules, the
// promise and exhaustiveness rules, no console, and the dependency direction of every folder
// (STYLE §1). test/invariants/layers.test.ts holds the same table and checks that these rules
// still enforce it, so neither can be weakened alone.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Every folder (and root module) of ours that code can import, as a path from the repository root. */
export const UNITS = [
  'src/core',
  'src/io',
  'src/log',
  'src/transports',
  'src/upstreams',
  'src/strict',
  'src/config',
  'src/auth',
  'src/policy',
  'src/telemetry',
  'src/admin',
  'src/cluster',
  'src/emulate',
  'src/cli',
  'src/gateway.ts',
  'src/index.ts',
  'src/version.ts',
  'dialects/2026-07-28',
  'dialects/2025-03-26',
  'dialects/2024-11-05',
  'dialects/index.ts',
  'dialects/peer.ts',
];

/** What each folder may import of ours besides itself; everything else of ours is refused. */
export const LAYERS = {
  'src/core': [],
  'src/io': ['src/core'],
  'src/log': [],
  'src/strict': ['src/core'],
  'src/transports': ['src/core', 'src/log', 'src/io'],
  'src/upstreams': ['src/core', 'src/log', 'src/io'],
  'src/config': ['src/core', 'src/log', 'src/io', 'src/auth', 'src/policy'],
  'src/auth': ['src/core', 'src/log'],
  'src/policy': ['src/core'],
  'src/telemetry': ['src/core', 'src/log'],
  'src/admin': ['src/core', 'src/log', 'src/io', 'src/telemetry'],
  'src/cluster': ['src/core', 'src/log'],
  'src/emulate': ['src/core', 'src/log', 'src/config', 'src/transports', 'src/gateway.ts', 'dialects/index.ts'],
  // The CLI parses flags and starts what the composition root assembled: it never reaches into an era.
  'src/cli': UNITS.filter((u) => u.startsWith('src/')),
  'dialects/2026-07-28': ['src/core'],
  'dialects/2025-03-26': ['src/core'],
  // HTTP+SSE is the initialize era over an older transport: it reuses that era's session.
  'dialects/2024-11-05': ['src/core', 'dialects/2025-03-26'],
};

const zones = Object.entries(LAYERS).map(([target, may]) => ({
  target: `./${target}`,
  from: UNITS.filter((u) => u !== target && !may.includes(u)).map((u) => `./${u}`),
  message: `${target} may import only ${[target, ...may].join(', ')} (docs/architecture.md, layers).`,
}));

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'bench/node_modules/**', 'bench/results/**', 'conformance-results/**', 'coverage/**', 'test-artifacts/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // node:test runs and reports every test it is handed; the promise test() returns is its own.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // An async function that implements a Promise-returning interface turns a throw into a
      // rejection, which is what its callers handle; an await is not what makes it right.
      '@typescript-eslint/require-await': 'off',
      // A caught reason is rethrown or passed on as it came (unknown); new ones are catalogue errors.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      'import-x/no-restricted-paths': ['error', { zones }],
    },
  },
  {
    // Tests read wire bodies with JSON.parse and assert on them whole; typing each one first adds
    // nothing a failed assertion would not show.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['src/core/**/*.ts', 'dialects/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: ['fastify', 'undici', 'pino'], patterns: ['node:http', 'node:https', 'node:net'] }] },
  },
);
