// Operating runs from the journal list (docs/runs.md, docs/console.md): a failed or suspended
// run gets Dry run and Redrive buttons (from its failed step), a suspended one Abort; each
// redrive shows its attempts. The buttons show only when this page's caller may operate runs:
// the journal list answers it (`operate`: gateway.admin's roles, with Try it's Authorization
// value or the token cookie; without roles, a loopback client). The gateway decides every
// action again; its answer is shown as it comes.

import { $, el, pretty } from './page.js';

/** Whether the caller may operate runs, asked again at every reload (the credential may change). */
let allowed = false;

function headers(json) {
  const h = {};
  const auth = $('try-auth').value.trim();
  if (auth) h.authorization = auth;
  if (json) h['content-type'] = 'application/json';
  return h;
}

/** The headers of the journal list's request: the credential the buttons will send. */
export function credentialHeaders() {
  return headers(false);
}

/** Whether this caller may operate runs, as the journal list answered it (`operate`). */
export function setOperate(operate) {
  allowed = operate === true;
  document.body.dataset.operate = String(allowed);
}

function redrivable(run) {
  return run.status === 'SUSPENDED' || (run.status === 'DONE' && (run.outcome === 'FAIL' || run.outcome === 'TIMEOUT'));
}

/** What a dry run answered, in one line: the steps that would run again, and those not idempotent. */
function planText(plan) {
  const steps = (plan.steps ?? []).map((s) => s.id).join(' → ');
  const risky = plan.notIdempotent?.length ? ` · not idempotent: ${plan.notIdempotent.join(', ')}` : '';
  return `from ${plan.fromStep}: ${steps}${risky}`;
}

async function act(run, action, reload) {
  const status = $('run-status');
  status.removeAttribute('data-status');
  status.textContent = `${action.label} ${run.runId}…`;
  const reason = $('run-reason').value.trim();
  try {
    const res = await fetch(`/api/runs/${encodeURIComponent(run.runId)}/${action.route}`, {
      method: 'POST',
      headers: headers(true),
      body: JSON.stringify(action.body(reason)),
    });
    const text = await res.text();
    let shown = pretty(text);
    if (res.ok && action.name === 'dry-run') shown = planText(JSON.parse(text));
    status.textContent = `${action.label}: HTTP ${res.status} · ${shown}`;
    status.dataset.status = String(res.status);
  } catch (err) {
    status.textContent = `${action.label} failed: ${err.message}`;
    status.dataset.status = 'error';
  }
  if (action.name === 'dry-run') return;
  // the run goes on on its runner: at once in `sagaway start`, within resumeInterval on replicas
  await reload();
  setTimeout(() => void reload(), 1000);
}

const ACTIONS = [
  {
    name: 'dry-run',
    label: 'Dry run',
    route: 'redrive',
    when: redrivable,
    body: () => ({ fromStep: 'failed', dryRun: true }),
  },
  {
    name: 'redrive',
    label: 'Redrive',
    route: 'redrive',
    when: redrivable,
    body: (reason) => ({ fromStep: 'failed', reason }),
  },
  {
    name: 'abort',
    label: 'Abort',
    route: 'abort',
    // a waiting run is cancelled through its wait, as an operator (gateway.admin), whoever started it
    when: (run) => run.status === 'SUSPENDED' || run.status === 'WAITING',
    body: (reason) => ({ reason }),
  },
];

/** The attempts of a redriven run, one line (the details in its title). */
function attemptsLine(run) {
  if (!run.redriveCount) return undefined;
  const list = (run.attempts ?? []).map(
    (a) => `#${a.attempt} ${a.outcome}${a.errorCode ? ` ${a.errorCode}` : ''}${a.step ? ` at ${a.step}` : ''}`,
  );
  return el(
    'div',
    { class: 'attempts-line', title: list.join('\n') },
    `redriven ${run.redriveCount}× · ${list.join(' · ')}`,
  );
}

/** The cell of a journal row: the run's attempts, and its buttons for a caller who may operate runs. */
export function operateCell(run, reload) {
  const cell = el('td', { class: 'operate' });
  const attempts = attemptsLine(run);
  if (attempts) cell.append(attempts);
  if (!allowed || !run.runId) return cell;
  for (const action of ACTIONS) {
    if (!action.when(run)) continue;
    const button = el('button', { type: 'button', 'data-action': action.name }, action.label);
    button.addEventListener('click', () => void act(run, action, reload));
    cell.append(button);
  }
  return cell;
}
