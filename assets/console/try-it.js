// Try it (docs/console.md): one request to the one-shot form, or the stream form read with fetch
// (so that an Authorization header can be sent; EventSource cannot). The body starts as a real,
// editable example: the first of the saga's `inputSchema` examples (the model's `example`: a
// documented, valid input), else the input of the saga's latest run seen here, else `{}`.

import { $, el, pretty, state } from './page.js';

const MAX_STREAM_EVENTS = 500;
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** The input of the saga's latest traced run: the parameters its start step saw, path parameters left out. */
function fromRecentRun(saga) {
  const runs = [...state.runs.values()].filter(
    (r) => r.sagaId === saga.id && r.runner === saga.runner && WITH_BODY.has(r.method),
  );
  runs.sort((a, b) => b.at - a.at);
  const fromPath = new Set([...saga.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]));
  for (const run of runs) {
    const start = run.steps[0];
    if (!start || start.payload === undefined) continue;
    try {
      const parameters = JSON.parse(start.payload).parameters;
      if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) continue;
      return Object.fromEntries(Object.entries(parameters).filter(([k]) => !fromPath.has(k)));
    } catch {
      // cut at the snapshot size: not JSON any more
    }
  }
  return undefined;
}

/** Put an example body in the form for `saga`, unless the user has written one of their own. */
export function fillExample(saga, force = false) {
  const body = $('try-body');
  if (!force && body.dataset.edited === 'true') return;
  const method = $('try-method').value;
  if (!WITH_BODY.has(method)) {
    body.value = '';
    body.dataset.source = 'none';
    return;
  }
  const documented = saga.example !== undefined ? saga.example : undefined;
  const recent = documented === undefined ? fromRecentRun(saga) : undefined;
  const example = documented ?? recent ?? {};
  body.value = JSON.stringify(example, null, 2);
  body.dataset.source = documented !== undefined ? 'schema' : recent ? 'run' : 'empty';
  body.dataset.edited = 'false';
}

function tryHeaders(withBody) {
  const headers = {};
  const auth = $('try-auth').value.trim();
  if (auth) headers.authorization = auth;
  if (withBody) headers['content-type'] = 'application/json';
  return headers;
}

function tryTarget(form) {
  const path = $('try-path').value.trim();
  return `/api/${form}${path.startsWith('/') ? path : `/${path}`}`;
}

async function sendOnce(ev) {
  ev.preventDefault();
  const method = $('try-method').value;
  const withBody = WITH_BODY.has(method);
  const status = $('try-status');
  const out = $('try-response');
  status.textContent = 'sending…';
  out.textContent = '';
  try {
    const started = performance.now();
    const res = await fetch(tryTarget('request'), {
      method,
      headers: tryHeaders(withBody),
      ...(withBody ? { body: $('try-body').value || '{}' } : {}),
    });
    const text = await res.text();
    const ms = Math.round(performance.now() - started);
    status.textContent = `HTTP ${res.status} · ${ms} ms · request ${res.headers.get('x-request-id') ?? ''}`;
    status.dataset.status = String(res.status);
    out.textContent = pretty(text);
  } catch (err) {
    status.textContent = `failed: ${err.message}`;
  }
}

async function openStream() {
  stopStream();
  const method = $('try-method').value;
  const withBody = WITH_BODY.has(method);
  const controller = new AbortController();
  state.stream = controller;
  $('try-stop').disabled = false;
  const list = $('stream-events');
  list.replaceChildren();
  const status = $('try-status');
  status.textContent = 'stream opening…';
  try {
    const res = await fetch(tryTarget('stream'), {
      method,
      headers: { accept: 'text/event-stream', ...tryHeaders(withBody) },
      ...(withBody ? { body: $('try-body').value || '{}' } : {}),
      signal: controller.signal,
    });
    status.textContent = `stream: HTTP ${res.status} · request ${res.headers.get('x-request-id') ?? ''}`;
    if (!res.ok || !res.body) {
      $('try-response').textContent = pretty(await res.text());
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        showStreamEvent(block);
      }
    }
    status.textContent += ' · closed';
  } catch (err) {
    if (err.name !== 'AbortError') status.textContent = `stream failed: ${err.message}`;
  } finally {
    if (state.stream === controller) {
      state.stream = null;
      $('try-stop').disabled = true;
    }
  }
}

function showStreamEvent(block) {
  let id = '';
  let type = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return;
  const list = $('stream-events');
  const item = el('li', { 'data-event-id': id, 'data-event': type });
  item.append(
    el('span', { class: 'cursor' }, `${type === 'message' ? '' : `[${type}] `}${id ? `id ${id.slice(0, 16)}… ` : ''}`),
    document.createTextNode(data.join('\n')),
  );
  list.append(item);
  while (list.children.length > MAX_STREAM_EVENTS) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function stopStream() {
  if (state.stream) state.stream.abort();
  state.stream = null;
  $('try-stop').disabled = true;
}

/** Wire the form. */
export function setUpTryIt() {
  $('try-form').addEventListener('submit', sendOnce);
  $('try-stream').addEventListener('click', () => void openStream());
  $('try-stop').addEventListener('click', stopStream);
  $('try-body').addEventListener('input', () => ($('try-body').dataset.edited = 'true'));
  $('try-method').addEventListener('change', () => state.saga && fillExample(state.saga));
}
