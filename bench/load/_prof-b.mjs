import { sagawayStart } from '../lib/servers.mjs';
import { BODIES } from './bodies.mjs';
import { Agent, request } from 'undici';
const s = await sagawayStart('examples/todo/sagaway.yaml', {
  env: { TODO_DB: '/tmp/load/b' + Date.now() + '.db' },
  nodeArgs: ['--cpu-prof', '--cpu-prof-dir=/tmp/load/prof'],
});
const agent = new Agent({ connections: 16 });
const kinds = Object.values(BODIES).map(([, b]) => b);
const t0 = performance.now();
const ps = [];
for (let i = 0; i < 200; i++) {
  const w = t0 + i * 50 - performance.now();
  if (w > 0) await new Promise((r) => setTimeout(r, w));
  ps.push(
    request(s.base + '/api/request/todos', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: kinds[i % kinds.length],
      dispatcher: agent,
    }).then((r) => r.body.dump()),
  );
}
await Promise.all(ps);
await new Promise((r) => setTimeout(r, t0 + 10200 - performance.now()));
let prev;
let pages = 0;
for (;;) {
  const r = await request(s.base + '/api/request/todos' + (prev ? '?previous=' + encodeURIComponent(prev) : ''), {
    dispatcher: agent,
  });
  const j = await r.body.json();
  pages++;
  prev = j.next;
  if (!prev) break;
  await new Promise((r) => setTimeout(r, 50));
}
console.log('pages', pages, 'elapsed', ((performance.now() - t0) / 1000).toFixed(1));
await agent.close();
await s.stop();
