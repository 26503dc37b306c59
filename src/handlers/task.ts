import { randomUUID } from 'node:crypto';
import { SagawayError } from '../core/errors.js';
import { isObject } from '../core/path.js';
import { parseDuration } from '../core/units.js';
import type { ActionContext, AckResult, HandlerFactory } from './api.js';
import type { State, StateRecord } from '../states/state.js';
import { checkIdLength, domainState, stringParameter } from './params.js';

/**
 * The `task` handler: work that waits for a human or another system. StartTask stores a WAITING
 * task and answers ACK with its id; ProceedTask completes it with a result (DONE); GetTask reads
 * it. A task whose deadline has passed while WAITING reads and acts as TIMEOUT: the check is made
 * on every read and proceed against the stored deadline, so it holds across restarts without a
 * timer. Tasks live in the state named by the domain (default `tasks`).
 */

/** A task as actions answer it. */
export interface TaskView {
  taskId: string;
  name: string | null;
  status: 'WAITING' | 'DONE' | 'TIMEOUT';
  data: unknown;
  result?: unknown;
  /** ISO time after which a WAITING task is TIMEOUT; null = never */
  deadline: string | null;
  createdAt: string;
  completedAt?: string;
}

const DEFAULT_STATE = 'tasks';
/** Longest task timeout: a year and a day. */
const MAX_TIMEOUT_MS = 366 * 24 * 3_600_000;

function tasks(ctx: ActionContext, what: string): State {
  return domainState(ctx, what, DEFAULT_STATE);
}

function effectiveStatus(data: Record<string, unknown>, now: number): TaskView['status'] {
  const status = data['status'];
  if (status === 'DONE') return 'DONE';
  const deadline = typeof data['deadline'] === 'string' ? Date.parse(data['deadline']) : Number.NaN;
  return Number.isFinite(deadline) && now >= deadline ? 'TIMEOUT' : 'WAITING';
}

/** The public view of a stored task (internal fields left out). */
function view(record: StateRecord, now = Date.now()): TaskView {
  const d = record.data;
  const out: TaskView = {
    taskId: record.id,
    name: typeof d['name'] === 'string' ? d['name'] : null,
    status: effectiveStatus(d, now),
    data: d['data'] ?? null,
    deadline: typeof d['deadline'] === 'string' ? d['deadline'] : null,
    createdAt: String(d['createdAt'] ?? ''),
  };
  if (d['status'] === 'DONE') {
    out.result = d['result'] ?? null;
    if (typeof d['completedAt'] === 'string') out.completedAt = d['completedAt'];
  }
  return out;
}

function taskId(input: unknown, ctx: ActionContext, what: string): string {
  const fromInput = isObject(input) ? input['taskId'] : undefined;
  const id = typeof fromInput === 'string' && fromInput !== '' ? fromInput : stringParameter(ctx, 'taskId');
  if (id === undefined) throw new SagawayError('VALIDATION_FAILED', `${what} needs a taskId in its input`);
  return checkIdLength(id);
}

async function load(state: State, id: string): Promise<StateRecord> {
  const record = await state.get(id);
  if (!record) throw new SagawayError('RECORD_NOT_FOUND', 'task not found');
  return record;
}

/** task.StartTask@0: store a WAITING task; ACK with `{ taskId, status: "WAITING" }`. */
async function startTask(input: unknown, ctx: ActionContext): Promise<AckResult> {
  const raw = ctx.parameters['timeout'];
  const timeoutMs = raw === undefined || raw === null || raw === '' ? undefined : parseDuration(raw);
  if (
    (timeoutMs === undefined && raw !== undefined && raw !== null && raw !== '') ||
    (timeoutMs ?? 0) > MAX_TIMEOUT_MS
  ) {
    throw new SagawayError(
      'VALIDATION_FAILED',
      'parameter "timeout" must be a duration ("30s", "2h", or milliseconds) of at most 366 days',
    );
  }
  const now = Date.now();
  const id = randomUUID();
  const data = {
    name: stringParameter(ctx, 'name') ?? null,
    status: 'WAITING',
    data: input ?? null,
    deadline: timeoutMs === undefined ? null : new Date(now + timeoutMs).toISOString(),
    createdAt: new Date(now).toISOString(),
  };
  // the step's key makes a redelivered StartTask answer the task it created the first time
  const record = await tasks(ctx, 'task.StartTask').create(id, data, { idempotencyKey: ctx.idempotencyKey });
  return ctx.ack({ taskId: record.id, status: 'WAITING' });
}

/** task.ProceedTask@0: complete a WAITING task with `result`; TASK_NOT_WAITING otherwise. */
async function proceedTask(input: unknown, ctx: ActionContext): Promise<TaskView> {
  const id = taskId(input, ctx, 'task.ProceedTask');
  const state = tasks(ctx, 'task.ProceedTask');
  const record = await load(state, id);
  // a redelivery of the step that completed the task answers as the first delivery did
  if (record.data['status'] === 'DONE' && record.data['doneBy'] === ctx.idempotencyKey) return view(record);
  const now = Date.now();
  const status = effectiveStatus(record.data, now);
  if (status !== 'WAITING') throw notWaiting(status);
  const result = isObject(input) && input['result'] !== undefined ? input['result'] : null;
  try {
    const done = await state.update(
      id,
      { status: 'DONE', result, completedAt: new Date(now).toISOString(), doneBy: ctx.idempotencyKey },
      { expectedVersion: record.version, idempotencyKey: ctx.idempotencyKey },
    );
    return view(done, now);
  } catch (err) {
    // another ProceedTask got there first
    if (err instanceof SagawayError && err.code === 'STALE_VERSION') {
      throw notWaiting(effectiveStatus((await load(state, id)).data, Date.now()));
    }
    throw err;
  }
}

/** task.GetTask@0: the task, with status WAITING, DONE or TIMEOUT. */
async function getTask(input: unknown, ctx: ActionContext): Promise<TaskView> {
  return view(await load(tasks(ctx, 'task.GetTask'), taskId(input, ctx, 'task.GetTask')));
}

function notWaiting(status: string): SagawayError {
  return new SagawayError('TASK_NOT_WAITING', `the task is ${status}, not WAITING`);
}

/** The built-in `task` handler. */
export const taskHandler: HandlerFactory = () => ({
  name: 'task',
  actions: {
    StartTask: { 0: startTask },
    ProceedTask: { 0: proceedTask },
    GetTask: { 0: getTask },
  },
});
