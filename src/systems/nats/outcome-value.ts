import { hash as digest } from 'node:crypto';
import type { ErrorInfo } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import type { OutcomeStatus } from '../../core/messages.js';
import type { SagaResult } from '../../core/types.js';
import { token, type Names } from './names.js';

/**
 * What the outcome bucket holds (issue 13 part 1): one value per run, keyed by the caller's scope
 * and the run id, so that nobody else can read or overwrite it. The value carries the run's
 * status, and at the end its outcome, HTTP status, response or error and timestamps, and nothing
 * else: never the input, the request context, the principal or a credential (secrets are already
 * scrubbed from errors by the executor, and a response is what the caller was sent anyway).
 */

/** One run's value in the bucket (JSON). */
export interface OutcomeValue {
  v: 1;
  /** the run id (the X-Request-Id response header) */
  requestId: string;
  /** the client's own X-Request-Id, when it sent one */
  correlationId?: string;
  runner: string;
  deployment: string;
  /** process instance running it: a RUNNING value whose owner stopped advertising is LOST */
  owner: string;
  status: 'RUNNING' | 'DONE';
  outcome?: SagaResult['outcome'];
  http?: number;
  response?: unknown;
  /** the response was larger than `runners.R.statusMaxSize` and is not kept; its size in bytes */
  responseOmitted?: number;
  error?: ErrorInfo;
  startedAt: number;
  updatedAt: number;
}

/** The bucket of one runner's outcomes on one nats system: `<prefix>_status_<runner>`. */
export function bucketName(names: Names, runner: string): string {
  return `${names.prefix}_status_${token(runner)}`;
}

// crypto.hash (Node >= 20.12; engines ask >= 20.18.1) makes no Hash object: half the key's cost.
const hash = (text: string) => digest('sha256', text, 'hex').slice(0, 40);

/** Key of a run's value, bound to the caller's scope. */
export function outcomeKey(scope: string, requestId: string): string {
  return `run-${hash(`${scope}\n${requestId}`)}`;
}

/** Key of a correlation id's index entry (the first run of the caller that carried it). */
export function correlationKey(scope: string, correlationId: string): string {
  return `cor-${hash(`c\n${scope}\n${correlationId}`)}`;
}

/** Longest error message kept when a value has to be cut down. */
const MAX_CUT_MESSAGE = 512;

/**
 * The value as bytes, at most `maxBytes`. A larger value first loses its response (replaced by
 * `responseOmitted`, its size: the caller learns the run ended and how, and that the response
 * itself is gone), then the error keeps only its code, HTTP status, compensation and the start of
 * its message. A value is never refused for its size: the outcome is what matters.
 */
export function encodeOutcome(value: OutcomeValue, maxBytes: number): Uint8Array {
  const full = Buffer.from(JSON.stringify(value), 'utf8');
  if (full.length <= maxBytes) return full;
  const { response, ...rest } = value;
  const cut: OutcomeValue = { ...rest };
  if (response !== undefined) cut.responseOmitted = Buffer.byteLength(JSON.stringify(response) ?? '', 'utf8');
  const bytes = Buffer.from(JSON.stringify(cut), 'utf8');
  if (bytes.length <= maxBytes || !cut.error) return bytes;
  const e = cut.error;
  cut.error = {
    code: e.code,
    message: e.message.slice(0, MAX_CUT_MESSAGE),
    ...(e.http !== undefined ? { http: e.http } : {}),
    ...(e.step !== undefined ? { step: e.step } : {}),
    ...(isObject(e) && typeof e['compensation'] === 'string' ? { compensation: e['compensation'] } : {}),
  } as ErrorInfo;
  return Buffer.from(JSON.stringify(cut), 'utf8');
}

/**
 * A run's two values as text, built by joining pieces (issue 13's profile: the copy of the base
 * and its second JSON.stringify at the end were a tenth of a runner's sagaway CPU per request).
 * `head` is the JSON of the fields that never change, without its closing brace: made once when
 * the run begins, reused by its end. The values decode exactly like encodeOutcome's.
 */
export function outcomeHead(fixed: OutcomeFixed): string {
  return JSON.stringify(fixed).slice(0, -1);
}

/** The fields of a run's value that never change. */
export type OutcomeFixed = Pick<
  OutcomeValue,
  'v' | 'requestId' | 'correlationId' | 'runner' | 'deployment' | 'owner' | 'startedAt'
>;

/** The RUNNING value of a run whose head is `head`. */
export function encodeRunning(head: string, now: number): Uint8Array {
  return Buffer.from(`${head},"status":"RUNNING","updatedAt":${now}}`, 'utf8');
}

/** The DONE value; a value over `maxBytes` is cut down by encodeOutcome (`full` makes the object it needs). */
export function encodeDone(
  head: string,
  result: SagaResult,
  now: number,
  maxBytes: number,
  full: () => OutcomeValue,
): Uint8Array {
  let json = `${head},"status":"DONE","updatedAt":${now},"outcome":${JSON.stringify(result.outcome)},"http":${JSON.stringify(result.http)}`;
  const response = result.response === undefined ? undefined : JSON.stringify(result.response);
  if (response !== undefined) json += `,"response":${response}`;
  if (result.error) json += `,"error":${JSON.stringify(result.error)}`;
  const bytes = Buffer.from(`${json}}`, 'utf8');
  return bytes.length <= maxBytes ? bytes : encodeOutcome(full(), maxBytes);
}

/** A value read back, or undefined when it is not one of ours. */
export function decodeOutcome(data: Uint8Array): OutcomeValue | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    if (!isObject(v) || v['v'] !== 1 || typeof v['requestId'] !== 'string') return undefined;
    if (v['status'] !== 'RUNNING' && v['status'] !== 'DONE') return undefined;
    return v as unknown as OutcomeValue;
  } catch {
    return undefined;
  }
}

/** A correlation id's index entry: the run it points at. */
export function encodeIndex(requestId: string): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, index: requestId }), 'utf8');
}

/** An index entry read back. */
export function decodeIndex(data: Uint8Array): { requestId: string } | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    return isObject(v) && v['v'] === 1 && typeof v['index'] === 'string' ? { requestId: v['index'] } : undefined;
  } catch {
    return undefined;
  }
}

/** The status view of a value; `lost` when it is RUNNING and its owner is known to be gone. */
export function statusOfOutcome(v: OutcomeValue, lost: boolean): OutcomeStatus {
  const iso = (ms: unknown) => new Date(typeof ms === 'number' ? ms : 0).toISOString();
  return {
    requestId: v.requestId,
    ...(typeof v.correlationId === 'string' ? { correlationId: v.correlationId } : {}),
    status: v.status === 'RUNNING' && lost ? 'LOST' : v.status,
    ...(v.outcome !== undefined ? { outcome: v.outcome } : {}),
    ...(typeof v.http === 'number' ? { http: v.http } : {}),
    ...(v.response !== undefined ? { response: v.response } : {}),
    ...(typeof v.responseOmitted === 'number' ? { responseOmitted: v.responseOmitted } : {}),
    ...(isObject(v.error) ? { error: v.error } : {}),
    startedAt: iso(v.startedAt),
    updatedAt: iso(v.updatedAt),
  };
}
