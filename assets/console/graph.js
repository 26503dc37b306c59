// The saga graph (docs/console.md): drawn from the layout the server made, fitted to its box
// (zoom in, out and back to fit; the box scrolls), with the steps a failed run would undo and
// the pivot marked, and a selected run's path overlaid.

import { $, state, svg } from './page.js';

/** Text of a node's badge: what a step does besides its call (undo, pivot, retry). */
function badgeOf(node) {
  const marks = [];
  if (node.undoable) marks.push('↩ undo');
  if (node.pivot) marks.push('pivot');
  if (node.retried) marks.push('retry');
  return marks.join(' · ');
}

export function drawGraph(saga, onStep) {
  const g = saga.graph;
  const root = $('graph');
  root.replaceChildren();
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
  for (const node of g.nodes) root.append(drawNode(saga, node, onStep));
  fitGraph();
}

function drawNode(saga, node, onStep) {
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
  if (node.undoable) shape.setAttribute('data-undoable', 'true');
  if (node.pivot) shape.setAttribute('data-pivot', 'true');
  group.append(shape);
  const title = [node.description, node.undoable && 'undone (its compensate runs) when the run fails after it']
    .concat(node.pivot ? ['pivot: once it succeeds, the steps before it are never undone'] : [])
    .filter(Boolean)
    .join('\n');
  if (title) group.append(svg('title', {}, title));
  group.append(svg('text', { class: 'label', x: node.x, y: node.y + 4, 'text-anchor': 'middle' }, node.label));
  const badge = badgeOf(node);
  if (badge) {
    // Above the node's top right corner: inside, it would run into the step's name.
    const x = node.x + node.width / 2;
    const y = node.y - node.height / 2 - 3;
    group.append(svg('text', { class: 'badge', x, y, 'text-anchor': 'end', 'data-badge': badge }, badge));
  }
  group.addEventListener('click', () => onStep(saga, node.id));
  group.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') onStep(saga, node.id);
  });
  return group;
}

/** Size the drawing: the whole graph in its box (never enlarged), or the zoom chosen. */
export function fitGraph() {
  const g = state.saga?.graph;
  if (!g) return;
  const box = $('graph-box');
  const fit = Math.min(1, (box.clientWidth - 4) / g.width, Math.max(160, window.innerHeight * 0.58 - 4) / g.height);
  const scale = state.zoom ?? fit;
  const root = $('graph');
  root.setAttribute('width', Math.max(1, Math.floor(g.width * scale)));
  root.setAttribute('height', Math.max(1, Math.floor(g.height * scale)));
  $('zoom-level').textContent = `${Math.round(scale * 100)} %`;
}

/** Zoom by `factor` from the current scale; null goes back to fit. */
export function zoom(factor) {
  const root = $('graph');
  const g = state.saga?.graph;
  if (!g) return;
  const current = Number(root.getAttribute('width')) / g.width;
  state.zoom = factor === null ? null : Math.min(4, Math.max(0.1, current * factor));
  fitGraph();
}

function clearOverlay() {
  const root = $('graph');
  for (const rect of root.querySelectorAll('rect[data-step]')) {
    rect.removeAttribute('data-visited');
    rect.removeAttribute('data-status');
    rect.removeAttribute('data-undo-status');
  }
  for (const t of root.querySelectorAll('text.timing')) t.remove();
  if (state.saga) {
    for (const n of state.saga.graph.nodes) {
      const group = root.querySelector(`g[data-node="${CSS.escape(n.id)}"]`);
      group?.querySelector('text.label')?.setAttribute('y', n.y + 4);
      const badge = group?.querySelector('text.badge');
      if (badge) badge.textContent = badge.dataset.badge;
    }
  }
  for (const e of root.querySelectorAll('.edge.taken')) e.classList.remove('taken');
}

/** Overlay a run on the graph: the steps it visited with status and time, the edges taken, the undos. */
export function overlay(run) {
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
      rect.parentNode.querySelector('text.label').setAttribute('y', n.y - 2);
      const timing = svg(
        'text',
        { class: 'timing', x: n.x, y: n.y + 13, 'text-anchor': 'middle' },
        `${step.status} · ${step.ms} ms${step.attempts ? ` · ${step.attempts.length} tries` : ''}`,
      );
      rect.parentNode.append(timing);
    }
    if (previous !== null) {
      const edge = root.querySelector(`.edge[data-from="${CSS.escape(previous)}"][data-to="${CSS.escape(step.step)}"]`);
      if (edge) edge.classList.add('taken');
    }
    previous = step.step;
  }
  for (const undo of Array.isArray(run.undos) ? run.undos : []) {
    const rect = root.querySelector(`rect[data-step="${CSS.escape(String(undo.step))}"]`);
    if (!rect) continue;
    rect.setAttribute('data-undo-status', String(undo.status));
    const badge = rect.parentNode.querySelector('text.badge');
    if (badge) badge.textContent = `↩ undo ${undo.status}`;
  }
}
