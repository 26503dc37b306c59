import { createHash } from 'node:crypto';
import type { ApiSettings, AuthSettings, SagaDefinition, Settings } from '../../config/settings.js';
import { FORM_PREFIX, type Form } from './saga-path.js';
import { ApiMap } from './api-map.js';
import { routeReport } from './route-check.js';
import { openApiSettings, serversOf, usedComponents } from './openapi-info.js';
import { firstExample, IoComponents } from './openapi-io.js';

/**
 * The OpenAPI 3.1 document of what this gateway serves (`GET /api/openapi.json`, issue 14;
 * docs/gateway.md, OpenAPI), built once from the compiled settings: every saga that an API
 * entry reaches, under both forms, with its path parameters, methods, bodies, response formats,
 * problem+json errors and the auth schemes of its API.
 *
 * What goes in is chosen, never copied: paths, methods, parameter names, saga ids, role names,
 * error codes and statuses of `fail` steps. Free text (descriptions, messages), event settings,
 * values, secrets, credentials and connection URLs never do, so the document cannot carry a
 * secret or an injected value even when the configuration put one in a description.
 */

type Json = Record<string, unknown>;

/** Methods of the document; HEAD is implied by GET and OPTIONS is not a saga method. */
const DOCUMENTED = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const PROBLEM = { $ref: '#/components/responses/Problem' };
const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
/** The formats of the one-shot form (DESIGN §8). */
const FORMATS: Json = {
  'application/json': { schema: {} },
  'application/xml': { schema: { type: 'string' } },
  'text/html': { schema: { type: 'string' } },
  'text/csv': { schema: { type: 'string' } },
  'text/plain': { schema: { type: 'string' } },
};

/** A problem+json body that may list the input schema's failures (INVALID_INPUT). */
const INVALID_INPUT_SCHEMA: Json = {
  allOf: [{ $ref: '#/components/schemas/Problem' }],
  type: 'object',
  properties: {
    errors: {
      type: 'array',
      description: 'INVALID_INPUT: each failure (at most 10), a JSON pointer into the input and a message',
      items: {
        type: 'object',
        required: ['pointer', 'message'],
        properties: { pointer: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** `/todos/:id` -> `/todos/{id}`, and the names of its parameters. */
function template(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const segments = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      if (!s.startsWith(':')) return s;
      params.push(s.slice(1));
      return `{${s.slice(1)}}`;
    });
  return { path: '/' + segments.join('/'), params };
}

/** Security schemes of the configured auth: JWT (bearer header, or the cookie) and API keys. */
function securitySchemes(auth: AuthSettings): Json {
  const schemes: Json = {};
  if (auth.jwt !== undefined) {
    schemes['bearer'] = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
    schemes['cookie'] = { type: 'apiKey', in: 'cookie', name: auth.cookie, description: 'the JWT in a cookie' };
  }
  if (auth.apiKeys.length > 0) schemes['apiKey'] = { type: 'apiKey', in: 'header', name: 'X-API-Key' };
  return schemes;
}

/**
 * Responses of one saga: its success statuses, the statuses of its `fail` steps with their
 * codes, and problem+json for every other error.
 */
function responses(saga: SagaDefinition, form: Form, secured: boolean, output: Json | undefined): Json {
  const out: Json = {};
  if (form === 'stream') {
    out['200'] = {
      description: 'Server-Sent Events: one `message` event per entry of `list`, then `end` (or `error`)',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    };
    out['204'] = { description: 'the stream had ended: a reconnect with its final event id' };
  } else {
    const ok = new Set<number>();
    for (const step of saga.steps) if (step.type === 'success') ok.add(step.http ?? 200);
    // The JSON form of the answer is the output schema's, when the saga declares one.
    const content = output
      ? { ...FORMATS, 'application/json': { schema: output, ...firstExample(saga.outputSchema) } }
      : FORMATS;
    for (const status of ok.size > 0 ? [...ok].sort() : [200]) {
      out[String(status)] = { description: 'the saga succeeded', content };
    }
    out['202'] = { description: 'accepted: an event answered ACK', content: FORMATS };
  }
  const failures = new Map<number, Set<string>>();
  for (const step of saga.steps) {
    if (step.type !== 'fail' || step.error?.http === undefined) continue;
    const codes = failures.get(step.error.http) ?? new Set<string>();
    if (step.error.code !== undefined) codes.add(step.error.code);
    failures.set(step.error.http, codes);
  }
  for (const [status, codes] of failures) {
    const list = [...codes].sort().join(', ');
    out[String(status)] = {
      description: list === '' ? 'the saga failed' : `the saga failed: ${list}`,
      content: PROBLEM_CONTENT,
    };
  }
  // Any request may be malformed (INVALID_JSON, INVALID_INPUT, INVALID_CURSOR) or meet an
  // internal error: every operation lists a 4xx and a 5xx (linters ask for both).
  out['400'] ??= { $ref: '#/components/responses/BadRequest' };
  if (secured) {
    out['401'] ??= { $ref: '#/components/responses/Unauthorized' };
    out['403'] ??= PROBLEM;
  }
  out['500'] ??= PROBLEM;
  out['default'] = PROBLEM;
  return out;
}

/** The security of an operation: none for a public API whose saga needs no role. */
function security(api: ApiSettings, saga: SagaDefinition, schemes: Json): Json[] {
  if (api.public && (saga.roles ?? []).length === 0) return [];
  // OpenAPI 3.1: for schemes other than OAuth the array names the roles required
  const roles = api.roles.length > 0 ? [...api.roles] : [...(saga.roles ?? [])];
  return Object.keys(schemes).map((name) => ({ [name]: roles }));
}

function operation(
  form: Form,
  method: string,
  runner: string,
  api: ApiSettings,
  saga: SagaDefinition,
  params: string[],
  schemes: Json,
  io: IoComponents,
): Json {
  const parameters: Json[] = params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const typedQuery = BODY_METHODS.has(method) ? undefined : io.queryParameters(saga, runner);
  if (typedQuery) parameters.push(...typedQuery.filter((p) => !params.includes(p['name'] as string)));
  else if (!BODY_METHODS.has(method)) {
    parameters.push({
      name: 'input',
      in: 'query',
      description: 'the query is the saga input (parameters): any names, repeated ones become arrays',
      style: 'form',
      explode: true,
      schema: { type: 'object', additionalProperties: true },
    });
  }
  if (form === 'request' && KEYED_METHODS.has(method))
    parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (form === 'stream') parameters.push({ $ref: '#/components/parameters/LastEventId' });
  const sec = security(api, saga, schemes);
  const roles = { api: [...api.roles], saga: [...(saga.roles ?? [])] };
  const op: Json = {
    operationId: `${form}.${runner}.${saga.id}.${method.toLowerCase()}`,
    summary: `${saga.id} (runner ${runner})`,
    tags: [api.path],
    parameters,
    responses: responses(
      saga,
      form,
      sec.length > 0,
      saga.outputSchema === undefined ? undefined : io.ref(saga.outputSchema, runner, saga.id, 'output'),
    ),
    security: sec,
    'x-sagaway-roles': roles,
  };
  if (BODY_METHODS.has(method)) {
    const input = saga.inputSchema;
    const required = typeof input === 'object' && Array.isArray(input['required']) && input['required'].length > 0;
    op['requestBody'] = {
      description: 'the saga input (parameters): a JSON object',
      required,
      content: {
        'application/json':
          input === undefined
            ? { schema: { type: 'object' } }
            : { schema: io.ref(input, runner, saga.id, 'input'), ...firstExample(input) },
      },
    };
  }
  return op;
}

/** The two forms of a saga's path. */
const FORMS = ['request', 'stream'] as const;

/**
 * The OpenAPI document of `settings`, as a plain JSON object; `port`: the one the gateway
 * listens on (its server URL), default the configured one.
 */
export function openApiDocument(settings: Settings, port?: number): Json {
  const gateway = settings.gateway;
  const schemes = securitySchemes(gateway.auth);
  const io = new IoComponents();
  const paths: Record<string, Json> = {};
  // OpenAPI: paths that differ only in their parameters' names are one path. Sagas at
  // `/todos/:id` and `/todos/:todoId` share the first one's template (`{}` marks a parameter).
  const templates = new Map<string, { path: string; params: string[] }>();
  const apiMap = new ApiMap(gateway.apis);
  // `?? {}`: embedding programs and tests may hand over settings with a gateway block only
  for (const route of routeReport({ ...settings, runners: settings.runners ?? {} }).sagas) {
    if (route.api === undefined || route.problem !== undefined) continue;
    const segments = route.saga.path.split('/').filter((s) => s !== '');
    const own = template(route.saga.path);
    const shape = own.params.reduce((p, name) => p.replace(`{${name}}`, '{}'), own.path);
    if (!templates.has(shape)) templates.set(shape, own);
    const { path, params } = templates.get(shape)!;
    // Each method is documented with the entry that serves it (entries on one path may differ in auth).
    for (const m of route.saga.methods ?? ['GET']) {
      if (!(DOCUMENTED as readonly string[]).includes(m)) continue;
      const compiled = apiMap.match(segments, m);
      if (!compiled || !ApiMap.allows(compiled, m) || compiled.settings.runner !== route.runner) continue;
      // waits: a saga with a wait step is not served on the stream form (WAIT_NOT_STREAMABLE)
      const forms = route.saga.steps.some((s) => s.type === 'wait') ? (['request'] as const) : FORMS;
      for (const form of forms) {
        const item = (paths[FORM_PREFIX[form] + (path === '/' ? '' : path)] ??= {});
        item[m.toLowerCase()] = operation(form, m, route.runner, compiled.settings, route.saga, params, schemes, io);
      }
    }
  }
  const components: Record<string, Json> = {
    schemas: {
      ...io.schemas,
      Problem: {
        type: 'object',
        description: 'RFC 9457 problem details; `code` is stable (docs/errors.md)',
        required: ['type', 'title', 'status', 'code', 'detail', 'requestId'],
        properties: {
          type: { type: 'string', format: 'uri' },
          title: { type: 'string' },
          status: { type: 'integer' },
          code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]{1,63}$' },
          detail: { type: 'string' },
          requestId: { type: 'string', description: 'equals the X-Request-Id response header' },
        },
      },
    },
    responses: {
      Problem: { description: 'an error (problem+json)', content: PROBLEM_CONTENT },
      BadRequest: {
        description:
          'a malformed request: INVALID_JSON, INVALID_BODY, INVALID_CURSOR, or INVALID_INPUT (the input schema; `errors` lists each failure)',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/InvalidInput' } } },
      },
      Unauthorized: {
        description: 'no valid credentials',
        headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
        content: PROBLEM_CONTENT,
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'at most 255 visible ASCII characters (a quoted string: 257): the same key and body again replays the stored response',
        schema: { type: 'string', minLength: 1, maxLength: 257 },
      },
      LastEventId: {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'resume after this event (an EventSource sends it on reconnect)',
        schema: { type: 'string' },
      },
    },
    securitySchemes: schemes,
  };
  (components['schemas'] as Json)['InvalidInput'] = INVALID_INPUT_SCHEMA;
  const body: Json = { paths, components: usedComponents(paths, components) };
  // The version names this exact document: it changes when the served APIs change.
  const version = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 12);
  const license = openApiSettings(gateway).license;
  return {
    openapi: '3.1.0',
    info: {
      title: 'sagaway gateway',
      version,
      description: 'The APIs of this gateway, generated from its configuration. Errors are application/problem+json.',
      ...(license ? { license: { ...license } } : {}),
    },
    servers: serversOf(gateway, port),
    ...body,
  };
}
