// The sagaway console (docs/console.md). Plain browser JavaScript modules, no dependency: the
// server sends the graphs already laid out; graph.js draws them, run-view.js shows a run,
// try-it.js sends requests; this file lists the APIs, sagas and runs and listens to the feed.

import { drawGraph, fitGraph, overlay, zoom } from './graph.js';
import { $, BASE, el, state, time } from './page.js';
import { showRun } from './run-view.js';
import { fillExample, setUpTryIt } from './try-it.js';
import { waitCell } from './waits.js';
import { credentialHeaders, operateCell, setOperate } from './runs-admin.js';

const MAX_RUN_ROWS = 200;

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
    const row = el('tr', { 'data-api': api.path });
    row.append(
      el('td', { class: 'id', title: `${api.request}\n${api.stream}` }, api.path),
      el('td', {}, api.runner),
      el('td', {}, api.methods ? api.methods.join(' ') : 'any'),
      el('td', {}, authText(api.auth)),
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
  const changed = state.saga !== saga;
  state.saga = saga;
  for (const li of $('sagas').children) {
    li.classList.toggle('selected', li.dataset.saga === saga.id && li.dataset.runner === saga.runner);
  }
  $('saga-title').textContent = `${saga.id}  (runner ${saga.runner})`;
  $('saga-urls').textContent =
    `${saga.methods.join(' ')}  ${saga.request}   ·   ${saga.stream}   ·   ${accessText(saga)}`;
  $('try-path').value = saga.path.replace(/:([A-Za-z0-9_]+)/g, '1');
  $('try-method').value = saga.methods[0] ?? 'GET';
  if (changed) state.zoom = null;
  drawGraph(saga, showStep);
  fillExample(saga, changed);
  $('step-title').textContent = '';
  $('step-settings').textContent = 'Click a step to see its settings.';
  if (state.selectedRun && state.selectedRun.sagaId === saga.id && state.selectedRun.runner === saga.runner) {
    overlay(state.selectedRun);
  }
}

function showStep(saga, id) {
  for (const g of $('graph').querySelectorAll('.node')) g.classList.toggle('chosen', g.dataset.node === id);
  $('step-title').textContent = id;
  $('step-settings').textContent = JSON.stringify(saga.settings[id] ?? {}, null, 2);
}

// ------------------------------------------------------------------ runs

function addRun(run) {
  state.runs.set(run.requestId, run);
  const body = $('runs').tBodies[0];
  const old = body.querySelector(`tr[data-run="${CSS.escape(run.requestId)}"]`);
  const row = el('tr', { 'data-run': run.requestId, 'data-outcome': run.outcome, 'data-saga': run.sagaId });
  if (run.compensation) row.setAttribute('data-compensation', run.compensation);
  const outcome = run.compensation ? `${run.outcome} · undo ${run.compensation}` : run.outcome;
  row.append(
    el('td', {}, time(run.at)),
    el('td', { class: 'id', title: run.requestId }, run.requestId),
    el('td', { title: `${run.method} ${run.path}` }, run.sagaId),
    el('td', { class: `outcome-${run.outcome}` }, outcome),
    el('td', {}, String(run.http)),
    el('td', {}, String(run.ms)),
  );
  row.addEventListener('click', () => selectRun(run.requestId));
  if (old) old.replaceWith(row);
  else body.prepend(row);
  while (body.rows.length > MAX_RUN_ROWS) body.deleteRow(body.rows.length - 1);
  $('runs-hint').textContent = '';
  if (state.selectedRun && state.selectedRun.requestId === run.requestId) selectRun(run.requestId);
  // A run of the saga shown gives the try-it form its example, unless the user wrote their own.
  if (state.saga && state.saga.id === run.sagaId && state.saga.runner === run.runner) fillExample(state.saga);
}

function selectRun(requestId) {
  const run = state.runs.get(requestId);
  if (!run) return;
  state.selectedRun = run;
  for (const row of $('runs').tBodies[0].rows) row.classList.toggle('selected', row.dataset.run === requestId);
  const saga = state.model.sagas.find((s) => s.id === run.sagaId && s.runner === run.runner);
  if (saga && state.saga !== saga) selectSaga(saga);
  overlay(run);
  showRun(run);
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
  const res = await fetch(`${BASE}/api/journal`, { headers: credentialHeaders() });
  if (!res.ok) return;
  const { runs, operate } = await res.json();
  setOperate(operate);
  const body = $('journal').tBodies[0];
  body.replaceChildren();
  for (const run of runs) {
    const row = el('tr', { 'data-journal-run': run.requestId, 'data-status': run.status });
    row.append(
      el('td', {}, time(run.updatedAt)),
      el('td', { class: 'id', title: run.requestId }, run.requestId),
      el('td', {}, run.sagaId),
      el('td', { class: `outcome-${run.outcome ?? run.status}` }, run.outcome ?? run.status),
      el('td', {}, run.http === undefined ? '' : String(run.http)),
      waitCell(run, loadJournal),
      operateCell(run, loadJournal),
    );
    body.append(row);
  }
}

// ------------------------------------------------------------------ start

async function start() {
  const res = await fetch(`${BASE}/api/model`);
  state.model = await res.json();
  $('openapi').setAttribute('href', state.model.openapi);
  showApis(state.model.apis);
  showSagas(state.model.sagas);
  setUpTryIt();
  $('zoom-in').addEventListener('click', () => zoom(1.25));
  $('zoom-out').addEventListener('click', () => zoom(0.8));
  $('zoom-fit').addEventListener('click', () => zoom(null));
  window.addEventListener('resize', () => fitGraph());
  const wanted = new URLSearchParams(location.search).get('saga');
  const first = state.model.sagas.find((s) => s.id === wanted) ?? state.model.sagas[0];
  if (first) selectSaga(first);
  listenRuns();
  void loadJournal();
  setInterval(() => void loadJournal(), 10_000);
  document.body.dataset.ready = 'true';
}

void start();
