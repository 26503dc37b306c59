// Start bench/gateway/server.mjs in a child process and wait for its port.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Spawn a server; resolves with { port, child, memory() }. */
export function startServer(mode, env = {}) {
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const child = spawn(process.execPath, ['--expose-gc', ...prof, join(here, 'server.mjs'), mode], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        const { port } = JSON.parse(line);
        resolve({
          port,
          child,
          memory: () =>
            new Promise((r) => {
              child.once('message', (m) => r(m.memory));
              child.send('memory');
            }),
          /** CPU time used so far, in microseconds (user + system) */
          cpu: () =>
            new Promise((r) => {
              child.once('message', (m) => r(m.cpu.user + m.cpu.system));
              child.send('cpu');
            }),
          stop: () => (process.env.BENCH_PROF ? child.send('exit') : child.kill('SIGKILL')),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`server ${mode} exited with ${code}`)));
  });
}
