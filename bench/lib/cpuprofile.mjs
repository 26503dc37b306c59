// Reads a V8 .cpuprofile (what `node --cpu-prof` writes) and says where the CPU went: self time
// per function, inclusive time per function, and self time grouped by area (Node internals,
// fastify, sagaway's folders, GC, AbortController/timers, JSON). No dependency: the format is
// { nodes: [{ id, callFrame: { functionName, url, lineNumber }, children }], samples, timeDeltas,
// startTime, endTime }, times in µs of the monotonic clock.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Source line of each generated line's first mapping, from a source map's VLQ `mappings`. */
function firstSourceLines(map) {
  const out = [];
  let src = 0;
  let line = 0;
  map.mappings.split(';').forEach((group, genLine) => {
    let first;
    for (const seg of group.split(',')) {
      if (!seg) continue;
      const vals = [];
      let shift = 0;
      let v = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        v += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          vals.push(v & 1 ? -(v >> 1) : v >> 1);
          v = 0;
          shift = 0;
        }
      }
      if (vals.length >= 4) {
        src += vals[1];
        line += vals[2];
        first ??= { source: map.sources[src], line };
      }
    }
    out[genLine] = first;
  });
  return out;
}

const maps = new Map();
/** `src/x/y.ts:LINE` for a compiled dist file and 0-based line, through its source map; else null. */
function sourceOf(url, line0) {
  if (!url.startsWith('file://') || !url.includes('/dist/')) return null;
  const file = fileURLToPath(url);
  if (!maps.has(file)) {
    let lines = null;
    try {
      if (existsSync(`${file}.map`)) lines = firstSourceLines(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      lines = null;
    }
    maps.set(file, lines);
  }
  const hit = maps.get(file)?.[line0];
  if (!hit) return null;
  const rel = hit.source.replace(/^(\.\.\/)+/, '');
  return `${rel}:${hit.line + 1}`;
}

/** Where a frame lives, short: `src/runner/x.ts:12`, `node:_http_server:300`, `fastify/lib/route.js:80`. */
export function location(frame) {
  const { url, lineNumber } = frame;
  if (!url) return '(native)';
  const mapped = sourceOf(url, lineNumber);
  if (mapped) return mapped;
  const nm = url.lastIndexOf('/node_modules/');
  const short = nm >= 0 ? url.slice(nm + 14) : url.replace(/^file:\/\/.*\/dist\//, 'dist/');
  return `${short}:${lineNumber + 1}`;
}

const FASTIFY =
  /\/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify\/[^/]+|fast-json-stringify|fast-querystring|fast-decode-uri-component|safe-regex2|ret|toad-cache|process-warning|secure-json-parse|abstract-logging|fastify-plugin|rfdc|json-schema-ref-resolver|fast-uri)\//;
const ABORT = /^node:(internal\/abort_controller|internal\/event_target|timers|internal\/timers)$/;
const NET = /^node:(net|internal\/stream_base_commons|internal\/streams\/.*|stream|internal\/net)$/;

/** The area of a frame by its own url and name alone, or null for a native frame (url ''). */
function areaOf(frame) {
  const { url, functionName: fn } = frame;
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'V8/native, unattributed ((program))';
  if (!url) {
    if (fn === 'stringify' || fn === 'parse') return 'JSON (native stringify/parse)';
    if (/Abort/.test(fn)) return 'AbortController/timers';
    return null; // a builtin or binding: counted to its caller's area
  }
  if (ABORT.test(url) || /^(AbortController|AbortSignal|abort)/.test(fn)) return 'AbortController/timers';
  if (/^node:_http_|^node:internal\/http/.test(url)) return 'node: http server + parser';
  if (NET.test(url)) return 'node: net, streams, socket write';
  if (url.startsWith('node:')) return 'node: other (nextTick, promises, async hooks, ...)';
  if (FASTIFY.test(url)) return 'fastify (+ find-my-way, avvio, ...)';
  const m = /\/dist\/src\/([^/]+)\//.exec(url);
  if (m) return `sagaway ${m[1]}/`;
  if (/\/dist\/src\/[^/]+\.js$/.test(url)) return 'sagaway (root)';
  if (/\/bench\//.test(url) && !url.includes('/node_modules/')) return 'bench handler (the Map read)';
  const nm = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return `dep: ${nm[1]}`;
  return 'other';
}

/**
 * Analyses a parsed .cpuprofile. window: optional [fromUs, toUs] on the profile's clock; samples
 * outside it (start-up, shut-down) are left out. Returns { busyUs, idleUs, samples, self, total,
 * areas } where self/total are [{ key, name, where, us }] sorted, areas [{ area, us }].
 */
export function analyse(profile, window) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n) => `${n.callFrame.functionName}|${n.callFrame.url}|${n.callFrame.lineNumber}`;

  // A native leaf (a builtin, a binding like writev) belongs to its nearest caller with a url.
  const areaCache = new Map();
  const nodeArea = (id) => {
    if (areaCache.has(id)) return areaCache.get(id);
    const n = byId.get(id);
    let a = areaOf(n.callFrame);
    if (a === null) a = parent.has(id) ? nodeArea(parent.get(id)) : 'V8/native, unattributed ((program))';
    if (a === 'idle' && n.callFrame.functionName !== '(idle)') a = 'other';
    areaCache.set(id, a);
    return a;
  };
  const stackCache = new Map();
  const stackKeys = (id) => {
    if (stackCache.has(id)) return stackCache.get(id);
    const keys = new Set(parent.has(id) ? stackKeys(parent.get(id)) : []);
    keys.add(keyOf(byId.get(id)));
    stackCache.set(id, keys);
    return keys;
  };

  const self = new Map();
  const total = new Map();
  const areas = new Map();
  let busyUs = 0;
  let idleUs = 0;
  let samples = 0;
  let t = profile.startTime;
  const { samples: ss, timeDeltas: td } = profile;
  for (let i = 0; i < ss.length; i++) {
    t += td[i];
    // The time a sample stands for: up to the next sample (the last one: the median interval).
    const dt = i + 1 < td.length ? td[i + 1] : 1000;
    if (window && (t < window[0] || t > window[1])) continue;
    const n = byId.get(ss[i]);
    const area = nodeArea(n.id);
    if (area === 'idle') {
      idleUs += dt;
      continue;
    }
    samples++;
    busyUs += dt;
    areas.set(area, (areas.get(area) ?? 0) + dt);
    const k = keyOf(n);
    self.set(k, (self.get(k) ?? 0) + dt);
    for (const sk of stackKeys(n.id)) total.set(sk, (total.get(sk) ?? 0) + dt);
  }
  const frames = new Map(profile.nodes.map((n) => [keyOf(n), n.callFrame]));
  const list = (m) =>
    [...m]
      .map(([key, us]) => {
        const f = frames.get(key);
        return { key, name: f.functionName || '(anonymous)', where: location(f), area: areaOf(f), us };
      })
      .sort((a, b) => b.us - a.us);
  return {
    busyUs,
    idleUs,
    samples,
    self: list(self),
    total: list(total),
    areas: [...areas].map(([area, us]) => ({ area, us })).sort((a, b) => b.us - a.us),
  };
}
