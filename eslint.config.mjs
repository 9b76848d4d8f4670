// Lint for lib/, spec/, sample/ and bench/: typescript-eslint's recommended rules with type
// information, plus the three the house asks for. Formatting is Prettier's (npm run format:check).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'reports/', '.stryker-tmp/', 'node_modules/', 'sample/public/', '**/*.js', '**/*.mjs', 'spec/http/openapi/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        // Decorated signatures keep their parameter types at run time (design:paramtypes): an import
        // used only there is a value import, and consistent-type-imports must not turn it into a type one.
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Classes are what decorators and the scanner deal in: `Function` is the honest type of a
      // controller, a body class or a resolved type (Reflect metadata hands out exactly that).
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Header and cookie rules match control bytes on purpose.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The house bounds (STYLE.md): at most 4 parameters and 60 lines a function, as errors. The
    // only exceptions are the spec's positional outbound calls (FETCH-34, FETCH-35, FETCH-62), each
    // with an eslint-disable comment naming the rule and why.
    files: ['lib/**/*.ts'],
    rules: {
      'max-params': ['error', 4],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Specs load modules lazily and prove type errors with @ts-expect-error under a comment naming the rule.
    files: ['spec/**/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-expect-error': false }],
    },
  },
);
