// The modules `npm run mutate` mutates (issue 27: the code whose bugs the suite must catch), each
// with the focused tests that must kill its mutants. Stryker runs `test` once per mutant (the
// `command` runner: Node's test runner has no Stryker plugin), so a module's tests must be fast;
// `mutate` may name line ranges (`file:from-to`) where a whole file would be too slow.
// TESTING.md has the scores and what every surviving mutant means.

/** Compiled test files (dist/) run for each mutant of a module. */
const t = (...files) => files.map((f) => `dist/${f.replace(/\.ts$/, '.js')}`);

export const MODULES = {
  cursor: {
    mutate: ['src/gateway/stream/cursor.ts'],
    tests: t('src/gateway/stream/cursor.test.ts', 'src/gateway/stream/cursor-bounds.test.ts'),
  },
  group: {
    // the poll group's loop with what it was split into (issue 20): joining, delivery, the page
    mutate: [
      'src/gateway/stream/group.ts',
      'src/gateway/stream/group-registry.ts',
      'src/gateway/stream/delivery.ts',
      'src/gateway/stream/page.ts',
    ],
    tests: t('src/gateway/stream/group-loop.test.ts'),
  },
  engine: {
    // the lines of resume and compensation: the resumed run's state, the unwind entry, the
    // journal write, the visit counter and keys, pivot and registration, register() and the
    // reverse unwind with its resumed part (not the expression steps, routing or log lines)
    mutate: [
      'src/saga/engine.ts:79-88',
      'src/saga/engine.ts:104-106',
      'src/saga/engine.ts:186-195',
      'src/saga/engine.ts:259-261',
      'src/saga/engine.ts:301-321',
      'src/saga/unwind.ts:57-63',
      'src/saga/unwind.ts:88-105',
    ],
    tests: t('src/saga/compensation.test.ts', 'src/saga/engine-journal.test.ts', 'src/saga/engine-resume.test.ts'),
  },
  'request-keys': {
    // the key logic: the gateway's Idempotency-Key parsing, its claim and the answer to each kind
    // of claim, the response it stores; the memory store's claim, quota and expiry (the SQL
    // stores run the same contract suite, test/states/request-keys-contract.ts, against real
    // databases). The whole of both files is 460+ mutants at ~9 s each: hours on a shared machine.
    mutate: [
      'src/gateway/request/idempotency-header.ts:37-51',
      'src/gateway/request/idempotency-key.ts:131-178',
      'src/gateway/request/idempotency-key.ts:332-347',
      'src/gateway/request/idempotency-replay.ts:17-28',
      'src/states/request-keys/memory.ts:65-89',
      'src/states/request-keys/memory.ts:170-190',
    ],
    tests: t(
      'src/states/request-keys/store.test.ts',
      'src/gateway/request/idempotency-key.test.ts',
      'src/gateway/request/idempotency-key-rules.test.ts',
      'test/gateway/idempotency.test.ts',
      'test/gateway/idempotency-status.test.ts',
    ),
  },
  access: {
    mutate: ['src/gateway/console/access.ts'],
    tests: t('src/gateway/console/access.test.ts', 'src/gateway/console/access-rules.test.ts'),
  },
  logger: {
    mutate: ['src/core/logger.ts'],
    tests: t('src/core/logger-redaction.test.ts'),
  },
  inject: {
    // injectSettings and the placeholder pass (resolveString, resolveOne, readVariable)
    mutate: ['src/runner/executor/inject.ts:62-84', 'src/runner/executor/inject.ts:109-167'],
    tests: t('src/runner/executor/inject-rules.test.ts'),
  },
};
