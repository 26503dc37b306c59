import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeEnv } from '../../test/states/fake-handler-env.js';
import { isAck } from './api.js';
import { MemoryState } from '../states/memory.js';
import type { StateRecord } from '../states/state.js';
import { actionHandler, fillTemplate } from './action.js';
import { readHandler } from './read.js';
import { taskHandler } from './task.js';
import { writeHandler } from './write.js';

async function setup() {
  const actions = new MemoryState({ alias: 'actions' });
  const todos = new MemoryState({ alias: 'todos' });
  const archive = new MemoryState({ alias: 'archive' });
  const tasks = new MemoryState({ alias: 'tasks' });
  const f = fakeEnv({ actions, todos, archive, tasks }, [actionHandler, readHandler, writeHandler, taskHandler]);
  return { f, actions, todos, archive, tasks };
}

test('fillTemplate: typed whole placeholders, text inside strings, defaults, one pass only', () => {
  const params = { n: 5, name: 'ann', evil: '%%param_n%%', obj: { a: 1 } };
  assert.deepEqual(
    fillTemplate(
      {
        a: '%%param_n%%',
        b: 'hi %%param_name%%!',
        c: ['%%param_obj%%', 'x=%%param_obj%%'],
        d: '%%param_missing|dflt%%',
        e: '%%param_evil%%',
        f: 'v:%%param_evil%%',
        g: 7,
      },
      params,
    ),
    { a: 5, b: 'hi ann!', c: [{ a: 1 }, 'x={"a":1}'], d: 'dflt', e: '%%param_n%%', f: 'v:%%param_n%%', g: 7 },
  );
  assert.throws(() => fillTemplate('%%param_nope%%', params), { code: 'INJECT_UNRESOLVED' });
  // parameters.action names the record; it is not a template parameter
  assert.throws(() => fillTemplate('%%param_action%%', { action: 'x' }), { code: 'INJECT_UNRESOLVED' });
  const polluted = fillTemplate(JSON.parse('{"__proto__": {"x": 1}, "ok": 1}'), {});
  assert.deepEqual(polluted, { ok: 1 });
});

test("TakeAction runs the record's event with the input as payload and the parameters filled in", async () => {
  const { f, actions, todos } = await setup();
  await actions.create('addTodo', {
    description: 'create a todo in a state chosen by the caller',
    handler: 'write',
    action: 'Create',
    version: 0,
    domain: '%%param_target%%',
    inputElement: 'todo',
    parameters: { id: '%%param_newId%%' },
  });
  const out = (await f.call(
    'action',
    'TakeAction',
    { todo: { title: 'milk' } },
    {
      parameters: { action: 'addTodo', target: 'todos', newId: 't-1' },
    },
  )) as StateRecord;
  assert.deepEqual(out, { id: 't-1', version: 1, data: { title: 'milk' } });
  assert.deepEqual((await todos.get('t-1'))?.data, { title: 'milk' });

  await actions.create('firstN', {
    handler: 'read',
    action: 'GetList',
    version: '%%param_v|0%%',
    domain: 'todos',
    parameters: { limit: '%%param_n%%' },
  });
  await todos.create('t-2', {});
  await todos.create('t-3', {});
  const page = (await f.call('action', 'TakeAction', {}, { parameters: { action: 'firstN', n: 2 } })) as {
    list: unknown[];
  };
  assert.equal(page.list.length, 2);
});

test('a changed record applies at once to every saga that uses it', async () => {
  const { f, actions, todos, archive } = await setup();
  await actions.create('store', { handler: 'write', action: 'Create', version: 0, domain: 'todos' });
  // two different sagas (runs) using the same record
  await f.call('action', 'TakeAction', { id: 'a1' }, { parameters: { action: 'store' }, key: 'sagaA-run1:s' });
  await f.call('action', 'TakeAction', { id: 'b1' }, { parameters: { action: 'store' }, key: 'sagaB-run1:s' });
  assert.equal((await todos.list()).list.length, 2);
  await actions.update('store', { domain: 'archive' });
  await f.call('action', 'TakeAction', { id: 'a2' }, { parameters: { action: 'store' }, key: 'sagaA-run2:s' });
  await f.call('action', 'TakeAction', { id: 'b2' }, { parameters: { action: 'store' }, key: 'sagaB-run2:s' });
  assert.deepEqual(
    (await archive.list()).list.map((r) => r.id),
    ['a2', 'b2'],
  );
  assert.equal((await todos.list()).list.length, 2);
});

test('TakeAction: missing record, nested failures, ACK, bad templates and endless nesting', async () => {
  const { f, actions } = await setup();
  await assert.rejects(f.call('action', 'TakeAction', {}, { parameters: { action: 'nope' } }), {
    code: 'RECORD_NOT_FOUND',
    http: 404,
  });
  await assert.rejects(f.call('action', 'TakeAction', {}, {}), { code: 'VALIDATION_FAILED' });

  await actions.create('getTodo', { handler: 'read', action: 'Get', version: 0, domain: 'todos' });
  await assert.rejects(f.call('action', 'TakeAction', { id: 'ghost' }, { parameters: { action: 'getTodo' } }), {
    code: 'RECORD_NOT_FOUND',
    http: 404,
  });

  await actions.create('approval', {
    handler: 'task',
    action: 'StartTask',
    version: 0,
    parameters: { name: '%%param_name%%' },
  });
  const acked = await f.call(
    'action',
    'TakeAction',
    { amount: 5 },
    { parameters: { action: 'approval', name: 'approve' } },
  );
  assert.ok(isAck(acked));
  assert.equal((acked.output as { status: string }).status, 'WAITING');

  await actions.create('broken', { handler: 'read', version: 0 });
  await assert.rejects(f.call('action', 'TakeAction', {}, { parameters: { action: 'broken' } }), {
    code: 'VALIDATION_FAILED',
  });

  await actions.create('loop', {
    handler: 'action',
    action: 'TakeAction',
    version: 0,
    domain: 'actions',
    parameters: { action: 'loop' },
  });
  await assert.rejects(f.call('action', 'TakeAction', {}, { parameters: { action: 'loop' } }), {
    code: 'STEP_LIMIT_EXCEEDED',
  });
});
