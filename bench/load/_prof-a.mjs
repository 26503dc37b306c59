import { sagawayStart } from '../lib/servers.mjs';
import { BODIES } from '../load/bodies.mjs';
import { Agent, request } from 'undici';
const kind = process.argv[2];
const s = await sagawayStart('bench/load/sagaway.yaml', { env: { TODO_DB: '/tmp/load/p'+Date.now()+'.db' }, nodeArgs: ['--cpu-prof', '--cpu-prof-dir=/tmp/load/prof'] });
const agent = new Agent({ connections: 1 });
const body = BODIES[kind][1];
for (let i = 0; i < 60; i++) { const r = await request(s.base + '/api/request/todos', { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent }); await r.body.dump(); }
let prev; let pages=0;
for (;;) { const r = await request(s.base + '/api/request/todos' + (prev ? '?previous=' + encodeURIComponent(prev) : ''), { dispatcher: agent }); const j = await r.body.json(); pages++; prev = j.next; if (!prev) break; }
console.log('pages', pages);
await agent.close(); await s.stop();
