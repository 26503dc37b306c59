// What every module of the console shares (docs/console.md): the page's state and the helpers
// that make elements. Every text from the server is set with textContent, never parsed as HTML.

/** The console's base path (gateway.console.path). */
export const BASE = document.body.dataset.base;
const SVG = 'http://www.w3.org/2000/svg';

export const state = {
  model: null,
  saga: null, // the saga shown
  runs: new Map(), // requestId -> run record (latest run of that request id)
  selectedRun: null,
  stream: null, // AbortController of the open try-it stream
  zoom: null, // the graph's scale; null = fit to its box
};

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

export function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

export function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text; // cut at the snapshot size
  }
}

export function time(ms) {
  return new Date(ms).toLocaleTimeString();
}
