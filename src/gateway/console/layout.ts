import dagre from '@dagrejs/dagre';
import type { CompiledSaga, CompiledStep, StepType } from '../../saga/graph.js';

/**
 * The saga graph laid out once (when the console's model is first built, routes.ts) from the
 * compiled plan (@dagrejs/dagre, top to bottom), so that the browser only draws: no layout
 * library is shipped to it.
 */

/** A node as the console draws it. */
export interface GraphNode {
  id: string;
  kind: StepType;
  /** the step's `name`, else its id */
  label: string;
  description?: string;
  stroke: string;
  fill: string;
  /** an event step with a `compensate` (undone when the run fails after it) */
  undoable?: true;
  /** an event step that is a pivot (past it the saga only goes forward) */
  pivot?: true;
  /** an event step with a `retry` of more than one try */
  retried?: true;
  /** centre and size */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An edge with its label (`when` values, and the priority when it is not 0). */
export interface GraphEdge {
  from: string;
  to: string;
  label: string;
  when: string[] | null;
  priority: number;
  points: { x: number; y: number }[];
  /** position of the label */
  labelX: number;
  labelY: number;
}

export interface SagaGraph {
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** Colours of each step kind when the step sets none. */
export const KIND_COLOURS: Readonly<Record<StepType, { stroke: string; fill: string }>> = {
  start: { stroke: '#57606a', fill: '#f6f8fa' },
  event: { stroke: '#0969da', fill: '#ddf4ff' },
  transform: { stroke: '#8250df', fill: '#fbefff' },
  condition: { stroke: '#9a6700', fill: '#fff8c5' },
  success: { stroke: '#1a7f37', fill: '#dafbe1' },
  fail: { stroke: '#cf222e', fill: '#ffebe9' },
  wait: { stroke: '#bc4c00', fill: '#fff1e5' }, // waits:
};

/**
 * A colour the console may put in an SVG attribute: #hex, a colour name, or rgb()/hsl() with
 * plain numbers. Anything else (a `url(...)` reference, text with quotes) falls back to the default.
 */
const COLOUR = /^(?:#[0-9a-f]{3,8}|[a-z]{1,32}|(?:rgba?|hsla?)\([0-9.,%\s/]{1,60}\))$/i;

function colour(value: string | undefined, fallback: string): string {
  return value !== undefined && COLOUR.test(value) ? value : fallback;
}

const CHAR_WIDTH = 7.2;
const NODE_HEIGHT = 44;

function nodeWidth(label: string): number {
  return Math.round(Math.min(240, Math.max(124, label.length * CHAR_WIDTH + 32)));
}

function edgeLabel(when: ReadonlySet<string> | null, priority: number): string {
  const values = when === null ? '' : [...when].join(', ');
  return priority !== 0 ? `${values}${values ? ' ' : ''}(p${priority})` : values;
}

/** Lay out one saga. */
export function layoutSaga(saga: CompiledSaga): SagaGraph {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 36, ranksep: 52, edgesep: 16, marginx: 16, marginy: 16 });
  const steps = [...saga.steps.values()];
  for (const step of steps) {
    const label = displayName(step);
    g.setNode(step.id, { width: nodeWidth(label), height: NODE_HEIGHT });
  }
  steps.forEach((step) => {
    step.links.forEach((link, i) => {
      const label = edgeLabel(link.when, link.priority);
      g.setEdge(
        step.id,
        link.to,
        { label, width: label.length * 6.4 + (label ? 10 : 0), height: label ? 16 : 0, labelpos: 'c' },
        `${i}`,
      );
    });
  });
  dagre.layout(g);
  const nodes = steps.map((step): GraphNode => {
    const n = g.node(step.id);
    const defaults = KIND_COLOURS[step.type];
    return {
      id: step.id,
      kind: step.type,
      label: displayName(step),
      ...(step.raw.description !== undefined ? { description: step.raw.description } : {}),
      stroke: colour(step.raw.stroke, defaults.stroke),
      fill: colour(step.raw.fill, defaults.fill),
      ...(step.type === 'event' && step.compensate ? { undoable: true as const } : {}),
      ...(step.type === 'event' && step.pivot ? { pivot: true as const } : {}),
      ...(step.type === 'event' && step.retry && step.retry.attempts > 1 ? { retried: true as const } : {}),
      x: n.x,
      y: n.y,
      width: n.width,
      height: n.height,
    };
  });
  const edges = steps.flatMap((step) =>
    step.links.map((link, i): GraphEdge => {
      const e = g.edge({ v: step.id, w: link.to, name: `${i}` }) as {
        points: { x: number; y: number }[];
        x?: number;
        y?: number;
      };
      return {
        from: step.id,
        to: link.to,
        label: edgeLabel(link.when, link.priority),
        when: link.when === null ? null : [...link.when],
        priority: link.priority,
        points: e.points.map((p) => ({ x: Math.round(p.x * 10) / 10, y: Math.round(p.y * 10) / 10 })),
        labelX: e.x ?? 0,
        labelY: e.y ?? 0,
      };
    }),
  );
  const size = g.graph();
  return { width: Math.ceil(size.width ?? 0), height: Math.ceil(size.height ?? 0), nodes, edges };
}

function displayName(step: CompiledStep): string {
  const name = step.raw.name;
  return typeof name === 'string' && name.trim() !== '' ? name.slice(0, 64) : step.id;
}
