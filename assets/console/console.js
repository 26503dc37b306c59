// The sagaway console (docs/console.md). Plain browser JavaScript, no dependency: the server sends
// the graphs already laid out; this file only draws them, listens to the run feed and sends
// try-it requests. Every text from the server is set with textContent, never parsed as HTML.

const BASE = document.body.dataset.base;
const SVG = 'http://www.w3.org/2000/svg';
const MAX_RUN_ROWS = 200;
const MAX_STREAM_EVENTS = 500;

const state = {
  model: null,
  saga: null, // the saga shown
  runs: new Map(), // requestId -> run record (latest run of that request id)
  selectedRun: null,
  stream: null, // AbortController of the open try-it stream
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// ------------------------------------------------------------------ APIs and sagas

function authText(auth) {
  return auth.public ? 'public' : auth.roles.length ? `roles: ${auth.roles.join(', ')}` : 'authenticated';
}

// Who may call a saga: each API entry's auth for the methods it serves, then the saga's own roles
// (checked on top of the API's).
function accessText(saga) {
  const api = saga.apis.length
    ? saga.apis.map((a) => `${a.methods.join(' ')}: API ${authText(a.auth)}`).join(' · ')
    : 'no API (404)';
  return saga.roles.length ? `${api} · saga roles: ${saga.roles.join(', ')}` : api;
}

function showApis(apis) {
  const body = $('apis').tBodies[0];
  body.replaceChildren();
  for (const api of apis) {
    const auth = authText(api.auth);
    const row = el('tr', { 'data-api': api.path });
    const path = el('td', { class: 'id', title: `${api.request}\n${api.stream}` }, api.path);
    row.append(
      path,
      el('td', {}, api.runner),
      el('td', {}, api.methods ? api.methods.join(' ') : 'any'),
      el('td', {}, auth),
    );
    body.append(row);
  }
}

function showSagas(sagas) {
  const list = $('sagas');
  list.replaceChildren();
  for (const saga of sagas) {
    const item = el('li', { 'data-saga': saga.id, 'data-runner': saga.runner });
    item.append(
      el('div', {}, saga.id),
      el('div', { class: 'path' }, `${saga.methods.join(' ')} ${saga.path}`),
      el('div', { class: 'runner' }, `runner ${saga.runner}`),
      el('div', { class: 'access' }, accessText(saga)),
    );
    item.addEventListener('click', () => selectSaga(saga));
    list.append(item);
  }
}

function selectSaga(saga) {
  state.saga = saga;
  for (const li of $('sagas').children) {
    li.classList.toggle('selected', li.dataset.saga === saga.id && li.dataset.runner === saga.runner);
  }
  $('saga-title').textContent = `${saga.id}  (runner ${saga.runner})`;
  $('saga-urls').textContent =
    `${saga.methods.join(' ')}  ${saga.request}   ·   ${saga.stream}   ·   ${accessText(saga)}`;
  $('try-path').value = saga.path.replace(/:([A-Za-z0-9_]+)/g, '1');
  $('try-method').value = saga.methods[0] ?? 'GET';
  drawGraph(saga);
  $('step-title').textContent = '';
  $('step-settings').textContent = 'Click a step to see its settings.';
  if (state.selectedRun && state.selectedRun.sagaId === saga.id && state.selectedRun.runner === saga.runner) {
    overlay(state.selectedRun);
  }
}

// ------------------------------------------------------------------ the graph

function drawGraph(saga) {
  const g = saga.graph;
  const root = $('graph');
  root.replaceChildren();
  root.setAttribute('width', g.width);
  root.setAttribute('height', g.height);
  root.setAttribute('viewBox', `0 0 ${g.width} ${g.height}`);
  const defs = svg('defs');
  const marker = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 8,
    markerHeight: 8,
    markerUnits: 'userSpaceOnUse',
    orient: 'auto-start-reverse',
  });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }));
  defs.append(marker);
  root.append(defs);
  for (const edge of g.edges) {
    const group = svg('g', { class: 'edge', 'data-from': edge.from, 'data-to': edge.to });
    const d = edge.points.map((p, i) => `${i === 0 ? 'M' : 'L'} ${p.x} ${p.y}`).join(' ');
    group.append(svg('path', { d, 'marker-end': 'url(#arrow)' }));
    if (edge.label) {
      const w = edge.label.length * 6.2 + 8;
      group.append(svg('rect', { x: edge.labelX - w / 2, y: edge.labelY - 8, width: w, height: 16, rx: 3 }));
      group.append(svg('text', { x: edge.labelX, y: edge.labelY + 4, 'text-anchor': 'middle' }, edge.label));
    }
    root.append(group);
  }
  for (const node of g.nodes) {
    const group = svg('g', { class: 'node', 'data-node': node.id, tabindex: 0 });
    const round =
      node.kind === 'start' || node.kind === 'success' || node.kind === 'fail'
        ? node.height / 2
        : node.kind === 'condition'
          ? 2
          : 8;
    const shape = svg('rect', {
      'data-step': node.id,
      'data-kind': node.kind,
      x: node.x - node.width / 2,
      y: node.y - node.height / 2,
      width: node.width,
      height: node.height,
      rx: round,
      fill: node.fill,
      stroke: node.stroke,
    });
    group.append(shape);
    if (node.description) group.append(svg('title', {}, node.description));
    group.append(svg('text', { x: node.x, y: node.y + 4, 'text-anchor': 'middle' }, node.label));
    group.addEventListener('click', () => showStep(saga, node.id));
    group.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') showStep(saga, node.id);
    });
    root.append(group);
  }
}

function showStep(saga, id) {
  for (const g of $('graph').querySelectorAll('.node')) g.classList.toggle('chosen', g.dataset.node === id);
  $('step-title').textContent = id;
  $('step-settings').textContent = JSON.stringify(saga.settings[id] ?? {}, null, 2);
}

function clearOverlay() {
  for (const rect of $('graph').querySelectorAll('rect[data-step]')) {
    rect.removeAttribute('data-visited');
    rect.removeAttribute('data-status');
  }
  for (const t of $('graph').querySelectorAll('text.timing')) t.remove();
  if (state.saga) {
    for (const n of state.saga.graph.nodes) {
      const label = $('graph').querySelector(`g[data-node="${CSS.escape(n.id)}"] text`);
      if (label) label.setAttribute('y', n.y + 4);
    }
  }
  for (const e of $('graph').querySelectorAll('.edge.taken')) e.classList.remove('taken');
}

function overlay(run) {
  clearOverlay();
  if (!state.saga || state.saga.id !== run.sagaId || state.saga.runner !== run.runner) return;
  const root = $('graph');
  const nodes = new Map(state.saga.graph.nodes.map((n) => [n.id, n]));
  let previous = null;
  for (const step of run.steps) {
    const rect = root.querySelector(`rect[data-step="${CSS.escape(step.step)}"]`);
    if (rect) {
      rect.setAttribute('data-visited', 'true');
      rect.setAttribute('data-status', step.status);
      const n = nodes.get(step.step);
      // Inside the node, under its name: the graph's width is the layout's, nothing may stick out.
      rect.parentNode.querySelector('text').setAttribute('y', n.y - 2);
      const timing = svg(
        'text',
        { class: 'timing', x: n.x, y: n.y + 13, 'text-anchor': 'middle' },
        `${step.status} · ${step.ms} ms`,
      );
      rect.parentNode.append(timing);
    }
    if (previous !== null) {
      const edge = root.querySelector(`.edge[data-from="${CSS.escape(previous)}"][data-to="${CSS.escape(step.step)}"]`);
      if (edge) edge.classList.add('taken');
    }
    previous = step.step;
  }
}

// ------------------------------------------------------------------ runs

function time(ms) {
  return new Date(ms).toLocaleTimeString();
}

function addRun(run) {
  state.runs.set(run.requestId, run);
  const body = $('runs').tBodies[0];
  const old = body.querySelector(`tr[data-run="${CSS.escape(run.requestId)}"]`);
  const row = el('tr', { 'data-run': run.requestId, 'data-outcome': run.outcome, 'data-saga': run.sagaId });
  row.append(
    el('td', {}, time(run.at)),
    el('td', { class: 'id', title: run.requestId }, run.requestId),
    el('td', { title: `${run.method} ${run.path}` }, run.sagaId),
    el('td', { class: `outcome-${run.outcome}` }, run.outcome),
    el('td', {}, String(run.http)),
    el('td', {}, String(run.ms)),
  );
  row.addEventListener('click', () => selectRun(run.requestId));
  if (old) old.replaceWith(row);
  else body.prepend(row);
  while (body.rows.length > MAX_RUN_ROWS) body.deleteRow(body.rows.length - 1);
  $('runs-hint').textContent = '';
  if (state.selectedRun && state.selectedRun.requestId === run.requestId) selectRun(run.requestId);
}

function selectRun(requestId) {
  const run = state.runs.get(requestId);
  if (!run) return;
  state.selectedRun = run;
  for (const row of $('runs').tBodies[0].rows) row.classList.toggle('selected', row.dataset.run === requestId);
  const saga = state.model.sagas.find((s) => s.id === run.sagaId && s.runner === run.runner);
  if (saga && state.saga !== saga) selectSaga(saga);
  overlay(run);
  $('run-title').textContent = `${run.requestId} · ${run.outcome} · HTTP ${run.http} · ${run.ms} ms`;
  const box = $('run-steps');
  box.replaceChildren();
  if (run.error) box.append(el('div', { class: 'err' }, `${run.error.code}: ${run.error.message ?? ''}`));
  for (const step of run.steps) {
    const details = el('details', { class: 'step-row', 'data-run-step': step.step });
    const summary = el(
      'summary',
      {},
      `${step.step} · ${step.status}${step.value !== undefined ? ` (${step.value})` : ''} · ${step.ms} ms`,
    );
    details.append(summary);
    if (step.error) details.append(el('div', { class: 'err' }, `${step.error.code}: ${step.error.message ?? ''}`));
    if (step.payload !== undefined) details.append(el('pre', {}, pretty(step.payload)));
    box.append(details);
  }
  if (run.droppedSteps) box.append(el('div', { class: 'hint' }, `${run.droppedSteps} more steps not traced`));
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text; // cut at the snapshot size
  }
}

function listenRuns() {
  const feed = new EventSource(`${BASE}/api/feed`);
  const badge = $('tracing');
  feed.addEventListener('hello', () => {
    badge.textContent = 'tracing live';
    badge.classList.add('live');
  });
  feed.addEventListener('run', (ev) => addRun(JSON.parse(ev.data)));
  feed.addEventListener('skipped', (ev) => {
    $('runs-hint').textContent = `${JSON.parse(ev.data).runs} runs skipped (this page read too slowly)`;
  });
  feed.addEventListener('error', () => {
    badge.textContent = 'reconnecting…';
    badge.classList.remove('live');
  });
}

async function loadJournal() {
  const res = await fetch(`${BASE}/api/journal`);
  if (!res.ok) return;
  const { runs } = await res.json();
  const body = $('journal').tBodies[0];
  body.replaceChildren();
  for (const run of runs) {
    const row = el('tr', { 'data-journal-run': run.requestId });
    row.append(
      el('td', {}, time(run.updatedAt)),
      el('td', { class: 'id', title: run.requestId }, run.requestId),
      el('td', {}, run.sagaId),
      el('td', { class: `outcome-${run.outcome ?? 'RUNNING'}` }, run.outcome ?? run.status),
      el('td', {}, run.http === undefined ? '' : String(run.http)),
    );
    body.append(row);
  }
}

// ------------------------------------------------------------------ try it

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
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
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

// The stream form read with fetch, so that an Authorization header can be sent (EventSource cannot).
async function openStream() {
  stopStream();
  const method = $('try-method').value;
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
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

// ------------------------------------------------------------------ start

async function start() {
  const res = await fetch(`${BASE}/api/model`);
  state.model = await res.json();
  $('openapi').setAttribute('href', state.model.openapi);
  showApis(state.model.apis);
  showSagas(state.model.sagas);
  const wanted = new URLSearchParams(location.search).get('saga');
  const first = state.model.sagas.find((s) => s.id === wanted) ?? state.model.sagas[0];
  if (first) selectSaga(first);
  $('try-form').addEventListener('submit', sendOnce);
  $('try-stream').addEventListener('click', () => void openStream());
  $('try-stop').addEventListener('click', stopStream);
  listenRuns();
  void loadJournal();
  setInterval(() => void loadJournal(), 10_000);
  document.body.dataset.ready = 'true';
}

void start();
