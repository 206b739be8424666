// Lint: typescript-eslint with the type-aware rules that catch real bugs here (floating promises,
// promises passed where a callback is expected, awaiting non-promises), no `any`, and one import
// convention (relative imports without a `.ts` extension). Formatting is Prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'var/**', 'fixtures/**', '**/*.d.ts', 'vitest.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      // validators refuse control characters on purpose, so regexes name them
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'ImportDeclaration[source.value=/^\\.{1,2}\\/.*\\.ts$/], ExportNamedDeclaration[source.value=/^\\.{1,2}\\/.*\\.ts$/], ExportAllDeclaration[source.value=/^\\.{1,2}\\/.*\\.ts$/]',
          message: 'relative imports name the module without its .ts extension',
        },
      ],
    },
  },
  {
    // route code runs in Workers-style isolates: no Node globals (the build also refuses node: imports)
    files: ['handlers/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: 'route code has no Buffer: use Uint8Array/TextEncoder' },
        { name: 'process', message: 'route code has no process: configuration comes through VARS' },
      ],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
