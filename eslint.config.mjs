// ESLint with typescript-eslint's recommended rules over the whole tree; Prettier owns the layout.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_` marks a parameter an interface requires but this implementation does not read.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // One read style (issue 10): no `any` flows on from a query, a request or a parse; no promise is
    // forgotten; no union member is skipped by a switch. Type-aware, so it needs the TypeScript project;
    // spec files stay out (their fixtures and mocks are not the product).
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      // A promise is awaited, returned, or marked `void` with a comment saying where its errors go.
      '@typescript-eslint/no-floating-promises': 'error',
      // A switch over a union handles every member (or says `default` on purpose).
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
    },
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
