// Waiting runs in the journal list (docs/console.md, docs/waits.md): what each waits for and,
// by the kind of its wait, Approve / Reject / Signal / Cancel buttons that call the gateway's
// own routes with the credential typed in Try it's Authorization field (or the token cookie the
// browser sends by itself). The gateway decides who may; its answer is shown as it comes.

import { $, el, pretty, state } from './page.js';

/** The wait step's settings as the model shows them (`wait: { signal, approvals, ... }`), if known. */
function waitSettings(run) {
  const saga = state.model?.sagas.find((s) => s.id === run.sagaId && s.runner === run.runner);
  const step = run.waitingOn?.step;
  return (saga && typeof step === 'string' && Object.hasOwn(saga.settings, step) && saga.settings[step].wait) || {};
}

/** One line: the step and what it waits for, until when. */
function waitText(run) {
  const on = run.waitingOn ?? {};
  const wait = waitSettings(run);
  const what = on.signal
    ? `${wait.approvals ? 'approval' : 'signal'} "${on.signal}"${on.key !== undefined ? ` (key ${on.key})` : ''}`
    : (on.kind ?? 'wait');
  const roles = wait.signal?.roles?.length ? ` · roles ${wait.signal.roles.join(', ')}` : '';
  const until = on.until ? ` · until ${new Date(on.until).toLocaleString()}` : '';
  return `${on.step ?? '?'}: ${what}${roles}${until}`;
}

/** The buttons a waiting run gets: approve/reject for an approval, signal for a signal, cancel for every wait. */
function actionsOf(run) {
  const on = run.waitingOn ?? {};
  const base = `/api/runs/${encodeURIComponent(run.requestId)}`;
  const actions = [];
  if (on.signal) {
    const url = `${base}/signals/${encodeURIComponent(on.signal)}`;
    if (waitSettings(run).approvals) {
      actions.push({ name: 'approve', label: 'Approve', url, body: () => '{}' });
      actions.push({ name: 'reject', label: 'Reject', url, body: () => '{"decision":"reject"}' });
    } else {
      actions.push({ name: 'signal', label: 'Signal', url, body: () => $('wait-body').value.trim() || '{}' });
    }
  }
  actions.push({ name: 'cancel', label: 'Cancel', url: `${base}/cancel` });
  return actions;
}

async function act(run, action, reload) {
  const status = $('wait-status');
  status.textContent = `${action.label} ${run.requestId}…`;
  const headers = {};
  const auth = $('try-auth').value.trim();
  if (auth) headers.authorization = auth;
  if (action.body) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(action.url, {
      method: 'POST',
      headers,
      ...(action.body ? { body: action.body() } : {}),
    });
    status.dataset.status = String(res.status);
    status.textContent = `${action.label}: HTTP ${res.status} · ${pretty(await res.text())}`;
  } catch (err) {
    status.textContent = `${action.label} failed: ${err.message}`;
  }
  // the run resumes on its runner's poller: at once in `sagaway start`, within a poll on replicas
  await reload();
  setTimeout(() => void reload(), 1000);
}

/** The cell of a journal row: for a waiting run, its wait and its buttons. */
export function waitCell(run, reload) {
  const cell = el('td', { class: 'wait' });
  if (run.status !== 'WAITING') return cell;
  cell.append(el('div', { class: 'waiting-on' }, waitText(run)));
  for (const action of actionsOf(run)) {
    const button = el('button', { type: 'button', 'data-action': action.name }, action.label);
    button.addEventListener('click', () => void act(run, action, reload));
    cell.append(button);
  }
  return cell;
}
