import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sagaway } from './spawn.js';

/** Issue 24 item 6: what `--help` says agrees with docs/cli.md and the guide. */

const squash = (s: string) => s.replace(/\s+/g, ' ');

test('run --user: the help and docs/cli.md give the same default (no user, ctx.user null), not "anonymous"', () => {
  const help = squash(sagaway(['run', '--help']).stdout);
  const option = /--user SUB (.*?) --roles/.exec(help)?.[1] ?? '';
  assert.match(option, /default no user \(ctx\.user is null\)/);
  const row = readFileSync('docs/cli.md', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('| `--user SUB` |'));
  assert.ok(row, 'docs/cli.md documents --user');
  assert.match(row, /default: no user \(`ctx\.user` is `null`/);
  for (const text of [option, row]) assert.doesNotMatch(text, /default:? anonymous/);
});

test('the guide says where / leads and that JWT_SECRET must be set once the file reads it', () => {
  const guide = readFileSync('docs/first-saga.md', 'utf8');
  assert.doesNotMatch(guide, /the page is a 404/);
  assert.match(squash(guide), /it leads to the console, at `\/console`/);
  assert.match(squash(guide), /From now on every command that reads `sagaway\.yaml` needs `JWT_SECRET`/);
});
