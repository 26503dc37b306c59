import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * createLogger as the CLI uses it, in a child process whose stdout and stderr are pipes (so JSON
 * lines, as in production behind a log collector): credentials and secrets never reach the
 * output, whatever field of the standard shapes holds them, and the rest of the line does.
 */

const LOGGER = fileURLToPath(new URL('./logger.js', import.meta.url));
const SECRET = 'sw-canary-4f1d';

/** Runs `body` (with `createLogger` in scope) in a child; returns its stdout and stderr. */
function child(body: string, env: Record<string, string | undefined> = {}): { out: string; err: string; pid: number } {
  const script = `const { createLogger, silentLogger } = await import(${JSON.stringify(LOGGER)});
console.error('pid=' + process.pid);
${body}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: undefined, ...env },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const pid = Number(/pid=(\d+)/.exec(r.stderr)?.[1]);
  return { out: r.stdout, err: r.stderr.replace(/pid=\d+\n/, ''), pid };
}

const lines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('createLogger redacts credentials and secrets in every field shape it declares', () => {
  const s = JSON.stringify(SECRET);
  const { out, pid } = child(`
const log = createLogger();
log.info({ req: { headers: { authorization: 'Bearer ' + ${s}, cookie: 'sagaway_token=' + ${s}, 'x-api-key': ${s}, accept: 'text/plain' } } }, 'incoming');
log.info({ headers: { authorization: ${s}, cookie: ${s}, 'x-api-key': ${s}, host: 'h' } }, 'outgoing');
log.info({ authorization: ${s}, password: ${s}, secret: ${s}, token: ${s}, user: 'ann' }, 'fields');
log.flush();
`);
  assert.ok(!out.includes(SECRET), `a secret reached the log:\n${out}`);
  const [incoming, outgoing, fields] = lines(out);
  const R = '[REDACTED]';
  assert.deepEqual((incoming?.['req'] as { headers: unknown }).headers, {
    authorization: R,
    cookie: R,
    'x-api-key': R,
    accept: 'text/plain',
  });
  assert.deepEqual(outgoing?.['headers'], { authorization: R, cookie: R, 'x-api-key': R, host: 'h' });
  assert.deepEqual(
    { a: fields?.['authorization'], p: fields?.['password'], s: fields?.['secret'], t: fields?.['token'] },
    { a: R, p: R, s: R, t: R },
  );
  // the rest of each line is kept: message, level, the process id as the only base field
  assert.equal(fields?.['user'], 'ann');
  assert.equal(fields?.['msg'], 'fields');
  assert.equal(fields?.['level'], 30);
  assert.equal(fields?.['pid'], pid);
  assert.equal(fields?.['hostname'], undefined, 'base holds the pid alone');
});

test('createLogger: level from settings, else LOG_LEVEL, else info; fd 2 writes to stderr', () => {
  const body = `const log = createLogger(SETTINGS); log.debug('d'); log.info('i'); log.warn('w'); log.flush();`;
  const levels = (text: string) => lines(text).map((l) => l['msg']);
  assert.deepEqual(levels(child(body.replace('SETTINGS', '')).out), ['i', 'w'], 'default info');
  assert.deepEqual(levels(child(body.replace('SETTINGS', ''), { LOG_LEVEL: 'warn' }).out), ['w'], 'LOG_LEVEL');
  assert.deepEqual(
    levels(child(body.replace('SETTINGS', `{ level: 'debug' }`), { LOG_LEVEL: 'warn' }).out),
    ['d', 'i', 'w'],
    'settings.level wins',
  );
  const toStderr = child(body.replace('SETTINGS', `{ fd: 2 }`));
  assert.equal(toStderr.out, '');
  assert.deepEqual(levels(toStderr.err), ['i', 'w']);
});

test('createLogger: pretty output on request, still redacted', () => {
  const s = JSON.stringify(SECRET);
  const { out } = child(`
const log = createLogger({ pretty: true });
log.info({ token: ${s}, user: 'ann' }, 'hello');
await new Promise((r) => setTimeout(r, 0));
log.flush();
`);
  // pino-pretty's transport writes when the worker has the line; the child exits after it
  assert.match(out, /hello/);
  assert.doesNotMatch(out, /^\{/, 'not a JSON line');
  assert.ok(!out.includes(SECRET));
  assert.match(out, /\[REDACTED\]/);
});

test('createLogger: pretty output is colored and goes to the chosen descriptor', () => {
  const { out, err } = child(`
const log = createLogger({ pretty: true, fd: 2 });
log.info({ user: 'ann' }, 'to stderr');
await new Promise((r) => setTimeout(r, 0));
log.flush();
`);
  assert.equal(out, '');
  assert.match(err, /to stderr/);
  assert.match(err, new RegExp(String.fromCharCode(27) + '\\['), 'ANSI colors');
});

test('silentLogger writes nothing, at any level', () => {
  const { out, err } = child(`
const log = silentLogger();
log.error('e'); log.warn('w'); log.info('i');
log.flush?.();
`);
  assert.equal(out, '');
  assert.equal(err, '');
});
