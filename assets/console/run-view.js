// A selected run below the graph (docs/console.md): each step with its status, time, error, the
// payload after it and every try of a retried step; then, for a failed run that registered undos,
// its compensation (COMPLETED or PARTIAL) and each undo with its status, time, key and tries.

import { $, el, pretty } from './page.js';

function errorText(error) {
  return `${error.code}: ${error.message ?? ''}`;
}

/** The tries of a step or undo tried more than once, one line each. */
function attemptsList(attempts) {
  const list = el('ol', { class: 'attempts' });
  for (const a of attempts) {
    const line = `try ${a.attempt} · ${a.status}${a.code ? ` · ${a.code}` : ''} · ${a.ms} ms`;
    list.append(el('li', { 'data-attempt': String(a.attempt), 'data-status': String(a.status) }, line));
  }
  return list;
}

function stepRow(step) {
  const details = el('details', { class: 'step-row', 'data-run-step': step.step });
  const tries = Array.isArray(step.attempts) ? ` · ${step.attempts.length} tries` : '';
  const value = step.value !== undefined ? ` (${step.value})` : '';
  details.append(el('summary', {}, `${step.step} · ${step.status}${value} · ${step.ms} ms${tries}`));
  if (step.error) details.append(el('div', { class: 'err' }, errorText(step.error)));
  if (tries) details.append(attemptsList(step.attempts));
  if (step.payload !== undefined) details.append(el('pre', {}, pretty(step.payload)));
  return details;
}

function undoRow(undo) {
  const details = el('details', {
    class: 'step-row undo',
    'data-undo': String(undo.step),
    'data-status': String(undo.status),
  });
  const tries = Array.isArray(undo.attempts) ? ` · ${undo.attempts.length} tries` : '';
  details.append(el('summary', {}, `↩ undo ${undo.step} · ${undo.status} · ${undo.ms} ms${tries}`));
  details.append(el('div', { class: 'key' }, `key ${undo.key}`));
  if (undo.error) details.append(el('div', { class: 'err' }, errorText(undo.error)));
  if (tries) details.append(attemptsList(undo.attempts));
  return details;
}

/** Show a run's steps and compensation under the graph. */
export function showRun(run) {
  const undo = run.compensation ? ` · compensation ${run.compensation}` : '';
  $('run-title').textContent = `${run.requestId} · ${run.outcome} · HTTP ${run.http} · ${run.ms} ms${undo}`;
  const box = $('run-steps');
  box.replaceChildren();
  if (run.error) box.append(el('div', { class: 'err' }, errorText(run.error)));
  for (const step of run.steps) box.append(stepRow(step));
  if (run.droppedSteps) box.append(el('div', { class: 'hint' }, `${run.droppedSteps} more steps not traced`));
  const undos = Array.isArray(run.undos) ? run.undos : [];
  if (undos.length === 0 && !run.compensation) return;
  const head = el('div', { class: `compensation compensation-${run.compensation}`, id: 'run-compensation' });
  head.textContent = `compensation: ${run.compensation ?? 'not traced'} · ${undos.length} undo${undos.length === 1 ? '' : 's'}, last registered first`;
  box.append(head);
  for (const u of undos) box.append(undoRow(u));
}
