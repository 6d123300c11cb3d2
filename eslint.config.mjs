// Type-aware linting: floating promises and non-exhaustive switches are errors, not style.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      // Written against types generated at test time; test/typed-client.e2e-spec.ts type-checks it.
      'test/typed-client/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    // The domain core is framework-free: no Nest, no database, no engine, nothing of the service's own
    // outside src/core, so the CLI, the build worker and the unit specs use it as it is.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@nestjs/|express$|typeorm$|pg$|bullmq$|ioredis$|@duckdb/|puppeteer)',
              message:
                'src/core is framework-free: keep Nest, HTTP, databases and engines out of it.',
            },
            {
              regex: '^@/(?!core/)',
              message: 'src/core imports only src/core.',
            },
            {
              regex: '^\\.\\./',
              message: 'Import with the @/core/ alias, not a relative path.',
            },
          ],
        },
      ],
    },
  },
  {
    // Infrastructure is free of HTTP: the edge (http/, openapi/, legacy/) stands on it, not the other way
    // (src/architecture.spec.ts checks the same between all rooms).
    files: ['src/{config,database,cache,metrics,engine}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@/(http|openapi|legacy)/|express$)',
              message: 'Infrastructure is free of HTTP: move what it needs below the edge.',
            },
          ],
        },
      ],
    },
  },
  {
    // The runtime, which every room uses, stands on the core alone.
    files: ['src/runtime/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@/(?!core/|runtime/)|express$)',
              message: 'src/runtime imports only src/core and src/runtime.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);
