import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * createLogger's redaction, on the logger the CLI really uses: it writes to file descriptor 1, so
 * a child process logs and this test reads its stdout.
 */

const LOGGER = fileURLToPath(new URL('./logger.js', import.meta.url));

/** The JSON lines a child writes after `createLogger(settings)` runs `body` (with `log` in scope). */
function linesOf(settings: string, body: string): Record<string, unknown>[] {
  const code = `import { createLogger } from ${JSON.stringify(LOGGER)};\nconst log = createLogger(${settings});\n${body}\nlog.flush();`;
  const env = { ...process.env };
  delete env['LOG_LEVEL'];
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('createLogger: credentials in headers and secret-named fields are replaced, the rest is logged', () => {
  const body = `
log.info({ req: { headers: { authorization: 'Bearer tok-1', cookie: 'sid=tok-2', 'x-api-key': 'tok-3', accept: 'text/plain' } } }, 'request');
log.info({ headers: { authorization: 'Basic tok-4', cookie: 'tok-5', 'x-api-key': 'tok-6', host: 'a.example' } }, 'outgoing');
log.warn({ authorization: 'tok-7', password: 'tok-8', secret: 'tok-9', token: 'tok-10', user: 'ann' }, 'fields');`;
  const lines = linesOf('{ pretty: false }', body);
  assert.equal(lines.length, 3);
  const text = JSON.stringify(lines);
  for (let i = 1; i <= 10; i++) assert.ok(!new RegExp(`tok-${i}\\b`).test(text), `tok-${i} was logged: ${text}`);
  const [req, out, fields] = lines as [Record<string, any>, Record<string, any>, Record<string, any>];
  assert.deepEqual(req['req'].headers, {
    authorization: '[REDACTED]',
    cookie: '[REDACTED]',
    'x-api-key': '[REDACTED]',
    accept: 'text/plain',
  });
  assert.deepEqual(out['headers'], {
    authorization: '[REDACTED]',
    cookie: '[REDACTED]',
    'x-api-key': '[REDACTED]',
    host: 'a.example',
  });
  assert.equal(fields['user'], 'ann');
  for (const k of ['authorization', 'password', 'secret', 'token']) assert.equal(fields[k], '[REDACTED]', k);
  assert.equal(fields['msg'], 'fields');
  assert.equal(typeof fields['pid'], 'number');
});

test('createLogger: the level comes from the settings (debug lines dropped at info)', () => {
  const lines = linesOf("{ pretty: false, level: 'info' }", "log.debug('hidden'); log.info('shown');");
  assert.deepEqual(
    lines.map((l) => l['msg']),
    ['shown'],
  );
});
