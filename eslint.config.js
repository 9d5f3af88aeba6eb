// One lint setup for the repository: typescript-eslint's recommended rules, no console.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/node_modules/**', 'bench/results/**', 'conformance-results/**'] },
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
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['../transports/*', '../upstreams/*', '../cli/*', '../log/*', '../../dialects/*', 'fastify', 'undici', 'pino'] },
      ],
    },
  },
  {
    files: ['dialects/*/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['../../src/transports/*', '../../src/upstreams/*', '../../src/cli/*', 'fastify', 'undici'] }],
    },
  },
);
