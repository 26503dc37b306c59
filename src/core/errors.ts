/**
 * Every error code sagaway can produce, declared once. A code is stable: it is documented in
 * docs/errors.md, tested, and never reused after it is retired. `http` is the status a client
 * sees; `retryable` says whether trying the same thing again later can succeed (a property of
 * the error type, not of the call site).
 */
export const ERROR_CODES = {
  // Gateway and request shape
  NOT_FOUND: { http: 404, title: 'Not Found', retryable: false },
  METHOD_NOT_ALLOWED: { http: 405, title: 'Method Not Allowed', retryable: false },
  UNAUTHORIZED: { http: 401, title: 'Unauthorized', retryable: false },
  FORBIDDEN: { http: 403, title: 'Forbidden', retryable: false },
  INVALID_JSON: { http: 400, title: 'Invalid JSON', retryable: false },
  INVALID_BODY: { http: 400, title: 'Invalid Body', retryable: false },
  INVALID_INPUT: { http: 400, title: 'Invalid Input', retryable: false },
  INVALID_OUTPUT: { http: 500, title: 'Invalid Output', retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, title: 'Unsupported Media Type', retryable: false },
  PAYLOAD_TOO_LARGE: { http: 413, title: 'Payload Too Large', retryable: false },
  TOO_MANY_VALUES: { http: 413, title: 'Too Many JSON Values', retryable: false },
  NOT_ACCEPTABLE: { http: 406, title: 'Not Acceptable', retryable: false },
  RESPONSE_TOO_LARGE: { http: 502, title: 'Response Too Large', retryable: false },
  STREAM_NEXT_TOO_LARGE: { http: 502, title: 'Stream Next Too Large', retryable: false },
  TOO_MANY_STREAMS: { http: 429, title: 'Too Many Streams', retryable: true },
  STREAMS_EXHAUSTED: { http: 503, title: 'Streams Exhausted', retryable: true },
  INVALID_CURSOR: { http: 400, title: 'Invalid Cursor', retryable: false },
  BAD_REQUEST: { http: 400, title: 'Bad Request', retryable: false },
  REQUEST_TIMEOUT: { http: 408, title: 'Request Timeout', retryable: true },
  URI_TOO_LONG: { http: 414, title: 'URI Too Long', retryable: false },
  HEADERS_TOO_LARGE: { http: 431, title: 'Request Header Fields Too Large', retryable: false },
  RATE_LIMITED: { http: 429, title: 'Rate Limited', retryable: true },
  STREAM_STALLED: { http: 503, title: 'Stream Stalled', retryable: true },
  RUNNER_UNAVAILABLE: { http: 503, title: 'Runner Unavailable', retryable: true },
  SERVICE_UNAVAILABLE: { http: 503, title: 'Service Unavailable', retryable: true },
  INTERNAL: { http: 500, title: 'Internal Server Error', retryable: false },
  IDEMPOTENCY_KEY_INVALID: { http: 400, title: 'Idempotency Key Invalid', retryable: false },
  IDEMPOTENCY_KEY_MISMATCH: { http: 422, title: 'Idempotency Key Mismatch', retryable: false },
  IDEMPOTENCY_KEY_IN_USE: { http: 409, title: 'Idempotency Key In Use', retryable: true },
  IDEMPOTENCY_KEYS_EXHAUSTED: { http: 429, title: 'Idempotency Keys Exhausted', retryable: true },

  // Saga engine
  SAGA_TIMEOUT: { http: 504, title: 'Saga Timeout', retryable: true },
  SAGA_FAILED: { http: 500, title: 'Saga Failed', retryable: false },
  UNHANDLED_STEP_FAILURE: { http: 500, title: 'Unhandled Step Failure', retryable: false },
  STEP_LIMIT_EXCEEDED: { http: 500, title: 'Step Limit Exceeded', retryable: false },
  RUN_BUDGET_EXCEEDED: { http: 500, title: 'Run Budget Exceeded', retryable: false },
  UNDO_LIMIT_EXCEEDED: { http: 500, title: 'Undo Limit Exceeded', retryable: false },
  TRANSFORM_FAILED: { http: 500, title: 'Transform Failed', retryable: false },
  EXPRESSION_FAILED: { http: 500, title: 'Expression Failed', retryable: false },
  OUTPUT_NOT_OBJECT: { http: 500, title: 'Output Not An Object', retryable: false },
  OUTPUT_PATH_CONFLICT: { http: 500, title: 'Output Path Conflict', retryable: false },
  INPUT_MISSING: { http: 400, title: 'Input Missing', retryable: false },
  NO_MATCHING_LINK: { http: 500, title: 'No Matching Link', retryable: false },
  REQUEST_ABORTED: { http: 499, title: 'Request Aborted', retryable: true },

  // Event step and runner pipeline
  EVENT_TIMEOUT: { http: 504, title: 'Event Timeout', retryable: true },
  EVENT_DELIVERY_EXHAUSTED: { http: 502, title: 'Event Delivery Exhausted', retryable: false },
  HANDLER_NOT_FOUND: { http: 500, title: 'Handler Not Found', retryable: false },
  HANDLER_REQUIRED: { http: 500, title: 'Handler Required', retryable: false },
  ACTION_NOT_FOUND: { http: 500, title: 'Action Not Found', retryable: false },
  ACTION_VERSION_UNSUPPORTED: { http: 500, title: 'Action Version Unsupported', retryable: false },
  ACTION_FAILED: { http: 500, title: 'Action Failed', retryable: false },
  DOMAIN_NOT_FOUND: { http: 500, title: 'Domain Not Found', retryable: false },
  INJECT_UNRESOLVED: { http: 500, title: 'Inject Unresolved', retryable: false },
  INVALID_PATH: { http: 500, title: 'Invalid Path', retryable: false },

  // States and built-in handlers
  RECORD_NOT_FOUND: { http: 404, title: 'Record Not Found', retryable: false },
  RECORD_EXISTS: { http: 409, title: 'Record Exists', retryable: false },
  STALE_VERSION: { http: 409, title: 'Stale Version', retryable: false },
  VALIDATION_FAILED: { http: 400, title: 'Validation Failed', retryable: false },
  QUERY_NOT_FOUND: { http: 500, title: 'Query Not Found', retryable: false },
  QUERY_FAILED: { http: 500, title: 'Query Failed', retryable: false },
  STATE_UNAVAILABLE: { http: 503, title: 'State Unavailable', retryable: true },
  UPSTREAM_ERROR: { http: 502, title: 'Upstream Error', retryable: false },
  UPSTREAM_TIMEOUT: { http: 504, title: 'Upstream Timeout', retryable: true },
  UPSTREAM_TOO_LARGE: { http: 502, title: 'Upstream Response Too Large', retryable: false },
  SSRF_BLOCKED: { http: 403, title: 'SSRF Blocked', retryable: false },
  TASK_NOT_WAITING: { http: 409, title: 'Task Not Waiting', retryable: false },

  // waits: wait steps, signals, callbacks (issue 21, docs/waits.md)
  WAIT_TIMEOUT: { http: 504, title: 'Wait Timeout', retryable: false },
  WAIT_REJECTED: { http: 409, title: 'Wait Rejected', retryable: false },
  RUN_CANCELLED: { http: 409, title: 'Run Cancelled', retryable: false },
  WAIT_NEEDS_JOURNAL: { http: 500, title: 'Wait Needs Journal', retryable: false },
  WAIT_NOT_STREAMABLE: { http: 400, title: 'Wait Not Streamable', retryable: false },
  WAIT_NOT_FOUND: { http: 404, title: 'Wait Not Found', retryable: false },
  WAIT_RESOLVED: { http: 409, title: 'Wait Already Resolved', retryable: false },
  CALLBACK_EXPIRED: { http: 410, title: 'Callback Expired', retryable: false },
  SIGNAL_INVALID: { http: 400, title: 'Signal Invalid', retryable: false },
  SIGNALS_EXHAUSTED: { http: 429, title: 'Signals Exhausted', retryable: true },
  SELF_APPROVAL: { http: 403, title: 'Self Approval Not Allowed', retryable: false },
  ALREADY_APPROVED: { http: 409, title: 'Already Approved', retryable: false },

  // operating runs: list, redrive, suspend, abort (issue 22, docs/runs.md)
  RUN_NOT_FOUND: { http: 404, title: 'Run Not Found', retryable: false },
  RUN_NOT_REDRIVABLE: { http: 409, title: 'Run Not Redrivable', retryable: false },
  ALREADY_REDRIVEN: { http: 409, title: 'Already Redriven', retryable: false },
  HISTORY_EXPIRED: { http: 410, title: 'History Expired', retryable: false },
  RUN_NOT_SUSPENDED: { http: 409, title: 'Run Not Suspended', retryable: false },
  RUN_ABORTED: { http: 409, title: 'Run Aborted', retryable: false },

  // Configuration (never reaches an HTTP client: the process refuses to start)
  CONFIG_INVALID: { http: 500, title: 'Configuration Invalid', retryable: false },
  API_METHODS_OVERLAP: { http: 500, title: 'API Methods Overlap', retryable: false },
} as const satisfies Record<string, { http: number; title: string; retryable: boolean }>;

/** A code declared in ERROR_CODES. User handlers may also use codes of their own. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The part of an error that may cross a process boundary or reach a client. */
export interface ErrorInfo {
  code: string;
  message: string;
  http?: number;
  /** id of the step that failed, when a step failed */
  step?: string;
  /** the error this one wraps (UNHANDLED_STEP_FAILURE wraps the step's error) */
  cause?: ErrorInfo;
  /** a failed saga's compensations: all undone, or some failed (absent: nothing to undo) */
  compensation?: 'COMPLETED' | 'PARTIAL';
}

/** Whether `code` is one of sagaway's own codes. */
export function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The HTTP status for a code: the declared one, else 500. */
export function httpFor(code: string): number {
  return isKnownCode(code) ? ERROR_CODES[code].http : 500;
}

/** Base error: a stable code, an HTTP status, an optional cause that never reaches a client. */
export class SagawayError extends Error {
  override readonly name: string = 'SagawayError';
  readonly code: string;
  readonly http: number;
  constructor(code: string, message: string, options: { http?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.http = options.http ?? httpFor(code);
  }

  /** Whether retrying can help, from the code's declaration. */
  get retryable(): boolean {
    return isKnownCode(this.code) ? ERROR_CODES[this.code].retryable : false;
  }

  toInfo(): ErrorInfo {
    return { code: this.code, message: this.message, http: this.http };
  }
}

/** One located problem in a configuration file. */
export interface ConfigIssue {
  file: string;
  line: number;
  col: number;
  /** dotted path inside the file, e.g. runners.todo.sagas[2].steps[4].eventMeta.version */
  path: string;
  message: string;
  /** warnings do not stop a process from starting */
  severity: 'error' | 'warning';
}

/** Format an issue as `FILE:LINE:COL PATH: message`. */
export function formatIssue(issue: ConfigIssue): string {
  const where = `${issue.file}:${issue.line}:${issue.col}`;
  return `${where} ${issue.path || '(root)'}: ${issue.message}`;
}

/** A configuration that cannot be loaded; carries every located issue found. */
export class ConfigError extends SagawayError {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super('CONFIG_INVALID', issues.map(formatIssue).join('\n'));
    this.issues = issues;
  }
}

/** Turn anything thrown into ErrorInfo that is safe to show: unknown errors become `fallback`. */
export function toErrorInfo(err: unknown, fallback: ErrorCode = 'INTERNAL'): ErrorInfo {
  if (err instanceof SagawayError) return err.toInfo();
  if (isCodedError(err)) {
    return { code: err.code, message: err.message, http: err.http ?? httpFor(err.code) };
  }
  return { code: fallback, message: ERROR_CODES[fallback].title, http: ERROR_CODES[fallback].http };
}

const CODE_RE = /^[A-Z][A-Z0-9_]{1,63}$/;

/** An error thrown by user code with an explicit upper-case `code` (and optional `http`). */
function isCodedError(err: unknown): err is { code: string; message: string; http?: number } {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; http?: unknown };
  // Node's own errors (ECONNREFUSED, ERR_*) carry codes too, and messages with host names:
  // they are internal failures, not codes a handler chose.
  if ('errno' in e || 'syscall' in e || (typeof e.code === 'string' && e.code.startsWith('ERR_'))) return false;
  return (
    typeof e.code === 'string' &&
    CODE_RE.test(e.code) &&
    typeof e.message === 'string' &&
    (e.http === undefined || (Number.isInteger(e.http) && (e.http as number) >= 400 && (e.http as number) <= 599))
  );
}
