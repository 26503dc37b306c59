import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RawConfig } from '../../src/config/schema.js';
import type { State } from '../../src/states/state.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/** Configurations are written as plain objects here; the loader validates them. */
const cfg = (value: unknown): RawConfig => value as RawConfig;

/**
 * The built-in handlers inside a real runner (config loading, effective settings, dispatch, the
 * saga engine), on memory and SQLite states: predefined action records, nested sagas, and the
 * tasks example's approval flow.
 */

const hosts: TestHost[] = [];
after(async () => {
  for (const h of hosts) await h.close();
});

const event = (id: string, meta: Record<string, unknown>, to = 'done') => ({
  id,
  type: 'event',
  eventMeta: { version: 0, ...meta },
  links: [{ to }],
});

test('action records: a changed record applies to every saga at once', async () => {
  const actionsSeed = JSON.stringify([
    { id: 'store', data: { handler: 'write', action: 'Create', version: 0, domain: '%%param_where|inbox%%' } },
  ]);
  const saga = (id: string, path: string) => ({
    id,
    path,
    methods: ['POST'],
    autoFail: true,
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'take' }] },
      event('take', {
        handler: 'action',
        action: 'TakeAction',
        inputElement: 'parameters',
        outputElement: '$.saved',
        parameters: { action: 'store' },
      }),
      { id: 'done', type: 'success', outputElement: 'saved' },
    ],
  });
  const h = await startTestHost(
    cfg({
      states: {
        actions: { type: 'sqlite', file: './data/actions.db', seed: './actions.json' },
        inbox: { type: 'memory' },
        archive: { type: 'memory' },
      },
      runners: {
        r: {
          handlers: ['action', 'write', 'read'],
          sagas: [
            saga('a', '/a'),
            saga('b', '/b'),
            {
              id: 'edit',
              path: '/actions/:id',
              methods: ['PATCH'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'update' }] },
                event('update', { handler: 'write', action: 'Update', domain: 'actions', inputElement: 'parameters' }),
                { id: 'done', type: 'success' },
              ],
            },
          ],
        },
      },
    }),
    { files: { 'actions.json': actionsSeed } },
  );
  hosts.push(h);
  const a1 = await h.run('/a', { method: 'POST', input: { id: 'a1' } });
  const b1 = await h.run('/b', { method: 'POST', input: { id: 'b1' } });
  assert.deepEqual([a1.outcome, b1.outcome], ['SUCCESS', 'SUCCESS']);
  // the host's states, to look inside them (a test-only peek at a private field)
  const states = (h.host as unknown as { states: Map<string, State> }).states;
  const state = (alias: string): State => states.get(alias) as State;
  assert.deepEqual(
    (await state('inbox').list()).list.map((r) => r.id),
    ['a1', 'b1'],
  );

  // change the record through the API itself
  const edit = await h.run('/actions/store', { method: 'PATCH', input: { domain: 'archive' } });
  assert.equal(edit.outcome, 'SUCCESS', JSON.stringify(edit));
  const a2 = await h.run('/a', { method: 'POST', input: { id: 'a2' } });
  const b2 = await h.run('/b', { method: 'POST', input: { id: 'b2' } });
  assert.deepEqual([a2.outcome, b2.outcome], ['SUCCESS', 'SUCCESS']);
  assert.deepEqual(
    (await state('archive').list()).list.map((r) => r.id),
    ['a2', 'b2'],
  );
  assert.equal((await state('inbox').list()).list.length, 2);

  // a record that does not exist is the step's failure, with its code and status
  const missing = await h.run('/actions/nope', { method: 'PATCH', input: { x: 1 } });
  assert.equal(missing.error?.code, 'RECORD_NOT_FOUND');
  assert.equal(missing.http, 404);
});

test('saga.StartSaga runs a saga of the same runner by id and by path, passing its outcome', async () => {
  const h = await startTestHost(
    cfg({
      states: { todos: { type: 'memory' } },
      runners: {
        r: {
          handlers: ['saga', 'read', 'write'],
          sagas: [
            {
              id: 'get-todo',
              path: '/todos/:id',
              methods: ['GET'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'load' }] },
                event('load', {
                  handler: 'read',
                  action: 'Get',
                  domain: 'todos',
                  inputElement: 'parameters',
                  outputElement: '$.todo',
                }),
                { id: 'done', type: 'success', outputElement: 'todo' },
              ],
            },
            {
              id: 'add',
              path: '/todos',
              methods: ['POST'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'create' }] },
                event('create', {
                  handler: 'write',
                  action: 'Create',
                  domain: 'todos',
                  inputElement: 'parameters',
                  outputElement: '$.todo',
                }),
                { id: 'done', type: 'success', outputElement: 'todo', http: 201 },
              ],
            },
            {
              id: 'outer',
              path: '/copy/:id',
              methods: ['POST'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'read' }] },
                event(
                  'read',
                  {
                    handler: 'saga',
                    action: 'StartSaga',
                    inputElement: 'parameters',
                    outputElement: '$.original',
                    parameters: { saga: 'get-todo' },
                  },
                  'copy',
                ),
                event('copy', {
                  handler: 'saga',
                  action: 'StartSaga',
                  inputElement: 'original.data',
                  outputElement: '$.copy',
                  parameters: { path: '/todos', method: 'POST' },
                }),
                { id: 'done', type: 'success', outputElement: 'copy' },
              ],
            },
          ],
        },
      },
    }),
  );
  hosts.push(h);
  await h.run('/todos', { method: 'POST', input: { id: 't1', title: 'milk' } });
  const copied = await h.run('/copy/t1', { method: 'POST', input: {} });
  assert.equal(copied.outcome, 'SUCCESS', JSON.stringify(copied));
  const copy = copied.response as { id: string; data: unknown };
  assert.notEqual(copy.id, 't1');
  assert.deepEqual(copy.data, { title: 'milk' });
  const missing = await h.run('/copy/nope', { method: 'POST', input: {} });
  assert.equal(missing.outcome, 'FAIL');
  assert.equal(missing.error?.code, 'RECORD_NOT_FOUND');
  assert.equal(missing.http, 404);
});

test('examples/tasks: the approval flow (StartTask, Follow Ack, condition, ProceedTask)', async () => {
  const example = fileURLToPath(new URL('../../../examples/tasks/', import.meta.url));
  const files: Record<string, string> = {};
  for (const name of await readdir(join(example, 'sagas'))) {
    files[`sagas/${name}`] = await readFile(join(example, 'sagas', name), 'utf8');
  }
  const config = await readFile(join(example, 'sagaway.yaml'), 'utf8');
  const h = await startTestHost(config, { files, env: { TASKS_DB: './data/tasks.db' } });
  hosts.push(h);

  const small = await h.run('/expenses', { method: 'POST', input: { amount: 40, what: 'taxi' } });
  assert.equal(small.outcome, 'SUCCESS', JSON.stringify(small));
  assert.equal(small.http, 200);
  assert.equal((small.response as { status: string }).status, 'DONE');
  assert.deepEqual((small.response as { result: unknown }).result, { approved: true, by: 'auto' });

  const big = await h.run('/expenses', { method: 'POST', input: { amount: 900, what: 'laptop' } });
  assert.equal(big.http, 202);
  const { taskId, status } = big.response as { taskId: string; status: string };
  assert.equal(status, 'WAITING');

  const read = await h.run(`/approvals/${taskId}`);
  assert.equal((read.response as { status: string }).status, 'WAITING');
  const decided = await h.run(`/approvals/${taskId}`, { method: 'POST', input: { approved: false, comment: 'no' } });
  assert.equal(decided.outcome, 'SUCCESS', JSON.stringify(decided));
  assert.deepEqual((decided.response as { result: unknown }).result, {
    approved: false,
    comment: 'no',
  });
  const again = await h.run(`/approvals/${taskId}`, { method: 'POST', input: { approved: true } });
  assert.equal(again.http, 409);
  assert.equal(again.error?.code, 'TASK_NOT_WAITING');
  const invalid = await h.run('/expenses', { method: 'POST', input: { amount: 'lots' } });
  assert.equal(invalid.http, 400);
  const unknown = await h.run('/approvals/nope');
  assert.equal(unknown.http, 404);
});

test('task timeout inside a saga: a task past its deadline reads TIMEOUT and cannot be proceeded', async () => {
  const h = await startTestHost(
    cfg({
      states: { tasks: { type: 'memory' } },
      runners: {
        r: {
          handlers: ['task'],
          sagas: [
            {
              id: 'start',
              path: '/start',
              methods: ['POST'],
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'ask' }] },
                event('ask', {
                  handler: 'task',
                  action: 'StartTask',
                  inputElement: 'parameters',
                  outputElement: '$.task',
                  parameters: { timeout: '100ms' },
                }),
                { id: 'done', type: 'success', outputElement: 'task' },
              ],
            },
            {
              id: 'get',
              path: '/tasks/:taskId',
              methods: ['GET'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'get' }] },
                event('get', {
                  handler: 'task',
                  action: 'GetTask',
                  inputElement: 'parameters',
                  outputElement: '$.task',
                }),
                { id: 'done', type: 'success', outputElement: 'task' },
              ],
            },
            {
              id: 'proceed',
              path: '/tasks/:taskId',
              methods: ['POST'],
              autoFail: true,
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'go' }] },
                event('go', {
                  handler: 'task',
                  action: 'ProceedTask',
                  inputElement: 'parameters',
                  outputElement: '$.task',
                }),
                { id: 'done', type: 'success', outputElement: 'task' },
              ],
            },
          ],
        },
      },
    }),
  );
  hosts.push(h);
  const started = await h.run('/start', { method: 'POST', input: { doc: 1 } });
  assert.equal(started.outcome, 'ACK');
  // without followAck the saga answers at the ACK: the response is the payload so far
  const { taskId } = (started.response as { task: { taskId: string } }).task;
  // the ACK holds the id; the task's own deadline is read from the task
  const { deadline } = (await h.run(`/tasks/${taskId}`)).response as { deadline: string };
  assert.ok(Number.isFinite(Date.parse(deadline)), `a deadline: ${deadline}`);
  // until it has passed (a timer may fire a millisecond early by Date.now())
  while (Date.now() <= Date.parse(deadline)) await sleep(Date.parse(deadline) - Date.now() + 1);
  const got = await h.run(`/tasks/${taskId}`);
  assert.equal(got.outcome, 'SUCCESS', JSON.stringify(got));
  assert.equal((got.response as { status: string }).status, 'TIMEOUT');
  const late = await h.run(`/tasks/${taskId}`, { method: 'POST', input: { result: 'late' } });
  assert.equal(late.error?.code, 'TASK_NOT_WAITING');
});
