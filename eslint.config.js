// Lint rules: typescript-eslint's recommended set over sources and tests, and the allowed imports between folders.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { architectureBlocks } from './eslint.architecture.js';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-*/**',
      'node_modules/**',
      'src/xds/gen/**',
      '.wrangler/**',
      '.meshsnap/**',
      'test-artifacts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  // One direction of imports between folders (eslint.architecture.js, README.md: Architecture).
  ...architectureBlocks(),
);
