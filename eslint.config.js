// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';

/**
 * The layers of src/, lowest first (CONVENTIONS.md, README "How it is built"): a folder imports
 * only the folders listed for it. Data flows gateway -> runner -> saga -> runner dispatch ->
 * handler -> state; the message types that cross layers live in core/messages.ts.
 */
export const LAYERS = {
  core: [],
  saga: ['core'],
  config: ['core', 'saga'],
  states: ['core', 'config'],
  systems: ['core', 'config'],
  handlers: ['core', 'config', 'states'],
  runner: ['core', 'saga', 'config', 'states', 'systems', 'handlers'],
  // The gateway reaches runners only through the contracts of core/messages.ts (SagaService,
  // StatusSource), which the CLI or an embedding program hands it at wiring time.
  gateway: ['core', 'saga', 'config', 'states', 'systems', 'handlers'],
  testing: ['core', 'saga', 'config', 'states', 'systems', 'handlers', 'runner', 'gateway'],
  cli: ['core', 'saga', 'config', 'states', 'systems', 'handlers', 'runner', 'gateway', 'testing'],
};

/**
 * Imports forbidden inside a layer a folder may otherwise use (issue 20): the runner reaches the
 * transports through the cluster port only (systems/system.ts, and systems/local.ts for the
 * in-process one); a transport (systems/nats/, systems/index.ts that picks one) is handed in.
 */
export const PORTS = {
  runner: [
    {
      regex: '^(\\.\\./)+systems/(?!(system|local)\\.js$)',
      message: 'cluster port: runner/ imports only systems/system.ts and systems/local.ts (eslint.config.js PORTS)',
    },
  ],
};

/** no-restricted-imports for one folder: any relative import that reaches a folder it may not use. */
function layerRule(folder) {
  const allowed = LAYERS[folder];
  const forbidden = Object.keys(LAYERS).filter((f) => f !== folder && !allowed.includes(f));
  return {
    files: [`src/${folder}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${forbidden.join('|')})(/|\\.js$)`,
              message: `layer order: ${folder}/ may import only ${allowed.join(', ') || 'nothing else in src/'} (eslint.config.js LAYERS)`,
            },
            ...(PORTS[folder] ?? []),
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'bench/node_modules/',
      'coverage/',
      'examples/**/data/',
      '.stryker-tmp/',
      'reports/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  // Regexes in src/ run on request data: super-linear backtracking is a denial of service (issue 9).
  // The recommended set, minus four rules that only restyle character classes (`\w` for
  // `[A-Za-z0-9_]`, the `i` flag, `\d`, `\v`): they find no bug and would rewrite 15 files.
  {
    files: ['src/**/*.ts'],
    ...regexp.configs['flat/recommended'],
    rules: {
      ...regexp.configs['flat/recommended'].rules,
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': 'error',
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
      'regexp/prefer-d': 'off',
      'regexp/control-character-escape': 'off',
    },
  },
  ...Object.keys(LAYERS)
    .filter((folder) => folder !== 'cli')
    .map(layerRule),
  // ... and no `import()` of a transport either (no-restricted-imports sees static imports only).
  {
    files: ['src/runner/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/systems\\/(nats|index)/]',
          message: 'cluster port: runner/ loads no transport; it is handed in (HostOptions.createCluster)',
        },
      ],
    },
  },
  // Promises in library code are awaited or handed on; a fire-and-forget one says so with `void`
  // and a comment (a rejected promise nobody handles ends the process).
  // (Not in tests: node:test's test() returns a promise that the runner itself tracks.)
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // One job per file (issue 20): a shipped file past 450 lines holds more than one.
      'max-lines': ['error', { max: 450 }],
    },
  },
  {
    files: ['src/cli/**', 'scripts/**', 'bench/**', 'examples/**', '**/*.test.ts', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  // Tests read loosely typed JSON responses; `any` there keeps assertions short.
  { files: ['**/*.test.ts', 'test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', URL: 'readonly' } },
  },
  // The console's page script runs in the browser (assets/console, docs/console.md).
  {
    files: ['assets/console/**/*.js'],
    languageOptions: {
      globals: {
        document: 'readonly',
        window: 'readonly',
        location: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        CSS: 'readonly',
        URLSearchParams: 'readonly',
        AbortController: 'readonly',
        TextDecoderStream: 'readonly',
        performance: 'readonly',
        setInterval: 'readonly',
      },
    },
  },
);
