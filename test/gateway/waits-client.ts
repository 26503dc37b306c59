import type { Gateway } from '../../src/gateway/server.js';

/** The wait tests' client calls through `gateway.app.inject`, with the caller's headers. */

/** A POST, its body JSON (a string is sent as it is); the answer's status, JSON body and headers. */
export async function postTo(
  gateway: Gateway,
  url: string,
  headers: Record<string, string | undefined>,
  body?: unknown,
) {
  const res = await gateway.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, headers: res.headers };
}

/** `GET /api/status/<runId>` as the caller of `headers`. */
export async function statusOf(gateway: Gateway, runId: string, headers: Record<string, string | undefined>) {
  const res = await gateway.app.inject({ method: 'GET', url: `/api/status/${runId}`, headers });
  return res.json() as {
    status: string;
    outcome?: string;
    response?: Record<string, unknown>;
    error?: { code: string };
    waitingOn?: { signal?: string };
  };
}
