import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { fakeEnv } from '../../test/states/fake-handler-env.js';
import { isAck } from './api.js';
import { MemoryState } from '../states/memory.js';
import { SqliteState } from '../states/sqlite.js';
import type { State } from '../states/state.js';
import { taskHandler, type TaskView } from './task.js';

function start(f: ReturnType<typeof fakeEnv>, input: unknown, parameters: Record<string, unknown> = {}, key?: string) {
  return f.call('task', 'StartTask', input, { parameters, ...(key ? { key } : {}) }).then((r) => {
    assert.ok(isAck(r), 'StartTask answers ACK');
    return r.output as { taskId: string; status: string };
  });
}

test('StartTask ACKs a WAITING task; ProceedTask completes it once; GetTask reads it', async () => {
  const tasks = new MemoryState({ alias: 'tasks' });
  const f = fakeEnv({ tasks }, [taskHandler]);
  const t = await start(f, { amount: 120 }, { name: 'approve-order' });
  assert.equal(t.status, 'WAITING');
  const waiting = (await f.call('task', 'GetTask', { taskId: t.taskId })) as TaskView;
  assert.equal(waiting.status, 'WAITING');
  assert.equal(waiting.name, 'approve-order');
  assert.deepEqual(waiting.data, { amount: 120 });
  assert.equal(waiting.deadline, null);

  const done = (await f.call(
    'task',
    'ProceedTask',
    { taskId: t.taskId, result: { approved: true } },
    { key: 'p-run:proceed' },
  )) as TaskView;
  assert.equal(done.status, 'DONE');
  assert.deepEqual(done.result, { approved: true });
  // the same step delivered again answers the same, another proceed is refused
  const again = (await f.call(
    'task',
    'ProceedTask',
    { taskId: t.taskId, result: { approved: true } },
    { key: 'p-run:proceed' },
  )) as TaskView;
  assert.deepEqual(again, done);
  await assert.rejects(f.call('task', 'ProceedTask', { taskId: t.taskId, result: { approved: false } }), {
    code: 'TASK_NOT_WAITING',
    http: 409,
  });
  assert.deepEqual(((await f.call('task', 'GetTask', { taskId: t.taskId })) as TaskView).result, { approved: true });
  assert.equal(Object.hasOwn((await f.call('task', 'GetTask', { taskId: t.taskId })) as object, 'doneBy'), false);
  await assert.rejects(f.call('task', 'GetTask', { taskId: 'nope' }), { code: 'RECORD_NOT_FOUND', http: 404 });
  await assert.rejects(f.call('task', 'ProceedTask', { taskId: 'nope' }), { code: 'RECORD_NOT_FOUND' });
  await assert.rejects(f.call('task', 'GetTask', {}), { code: 'VALIDATION_FAILED' });
});

test('StartTask delivered twice with one key creates one task', async () => {
  const tasks = new MemoryState({ alias: 'tasks' });
  const f = fakeEnv({ tasks }, [taskHandler]);
  const a = await start(f, {}, {}, 'run-1:start');
  const b = await start(f, {}, {}, 'run-1:start');
  assert.equal(a.taskId, b.taskId);
  assert.equal((await tasks.list()).list.length, 1);
});

test('concurrent ProceedTask calls: exactly one completes the task', async () => {
  const tasks = new MemoryState({ alias: 'tasks' });
  const f = fakeEnv({ tasks }, [taskHandler]);
  const t = await start(f, {});
  const results = await Promise.allSettled(
    Array.from({ length: 4 }, (_, i) => f.call('task', 'ProceedTask', { taskId: t.taskId, result: i })),
  );
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of results)
    if (r.status === 'rejected') assert.equal((r.reason as { code: string }).code, 'TASK_NOT_WAITING');
});

test('a WAITING task past its deadline reads and acts as TIMEOUT, also after a restart', async () => {
  const file = `/tmp/sagaway-task-${process.pid}-${Date.now()}.db`;
  const open = async (): Promise<State> => {
    const s = new SqliteState({ alias: 'tasks', file, table: 'tasks' });
    await s.init();
    return s;
  };
  const s1 = await open();
  const f1 = fakeEnv({ tasks: s1 }, [taskHandler]);
  const t = await start(f1, { doc: 1 }, { timeout: '150ms' });
  const before = (await f1.call('task', 'GetTask', { taskId: t.taskId })) as TaskView;
  assert.equal(before.status, 'WAITING');
  assert.ok(before.deadline && Date.parse(before.deadline) > Date.now());
  await s1.close();
  // until the task's own deadline has passed (a timer may fire a millisecond early by Date.now())
  while (Date.now() <= Date.parse(before.deadline!)) await sleep(Date.parse(before.deadline!) - Date.now() + 1);
  const s2 = await open();
  const f2 = fakeEnv({ tasks: s2 }, [taskHandler]);
  assert.equal(((await f2.call('task', 'GetTask', { taskId: t.taskId })) as TaskView).status, 'TIMEOUT');
  await assert.rejects(f2.call('task', 'ProceedTask', { taskId: t.taskId, result: 1 }), { code: 'TASK_NOT_WAITING' });
  await s2.close();
  await assert.rejects(start(f2, {}, { timeout: 'soon' }), { code: 'VALIDATION_FAILED' });
  await assert.rejects(start(f2, {}, { timeout: 1e300 }), { code: 'VALIDATION_FAILED' });
  const { rm } = await import('node:fs/promises');
  await rm(file, { force: true });
  await rm(`${file}-wal`, { force: true });
  await rm(`${file}-shm`, { force: true });
});

test('tasks live in the domain state when one is named', async () => {
  const approvals = new MemoryState({ alias: 'approvals' });
  const f = fakeEnv({ approvals }, [taskHandler]);
  const r = await f.call('task', 'StartTask', {}, { domain: 'approvals' });
  assert.ok(isAck(r));
  assert.equal((await approvals.list()).list.length, 1);
  await assert.rejects(f.call('task', 'StartTask', {}), { code: 'DOMAIN_NOT_FOUND' });
});
