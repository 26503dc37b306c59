// Processes of the suite: each service under test and each load generator runs in its own
// process. Servers are started, probed until they answer, measured (RSS from /proc) and stopped
// by their own pid only.
/* global fetch, AbortSignal, clearTimeout */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { pinned } from './runtime.mjs';

const children = new Set();
/** Remember a child process so that it is killed if the suite exits before stopping it. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** A free loopback TCP port (bound and released at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A `kB` field of /proc/<pid>/status in bytes, or NaN. */
function statusBytes(pid, field) {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Resident set size of a process in bytes (Linux /proc), or NaN. */
export function rssOf(pid) {
  return statusBytes(pid, 'VmRSS');
}

/** Peak resident set size of a process in bytes (VmHWM, Linux /proc), or NaN. */
export function peakRssOf(pid) {
  return statusBytes(pid, 'VmHWM');
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux /proc). */
export function cpuMsOf(pid) {
  const { user, sys } = cpuSplitOf(pid);
  return user + sys;
}

/** User and system CPU time of a process so far, in milliseconds each (Linux /proc), or NaN. */
export function cpuSplitOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(f[11]) * 1000) / CLK_TCK, sys: (Number(f[12]) * 1000) / CLK_TCK };
  } catch {
    return { user: NaN, sys: NaN };
  }
}

const CLK_TCK = 100; // USER_HZ: 100 on every Linux build that Node supports

/** Resolves after `ms`. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns a service and waits until `probe` (a URL, or an async function) answers 2xx/3xx.
 * Output goes to a ring buffer shown only if the service fails to start or dies early.
 */
export async function startService(name, command0, args0, { env = {}, probe, cwd, timeoutMs = 30_000, nofile } = {}) {
  // Servers may be pinned to a CPU (bench/lib/runtime.mjs); the wrapper execs, the pid stays.
  const [command, args] = pinned('server', command0, args0);
  const full = nofile ? ['-c', `ulimit -n ${nofile} && exec "$0" "$@"`, command, ...args] : args;
  const child = spawn(nofile ? 'bash' : command, full, {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'silent', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let out = '';
  const keep = (d) => {
    out = (out + d).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  child.once('exit', (code, signal) => (exited = { code, signal }));
  const deadline = Date.now() + timeoutMs;
  // probe false: nothing to probe (an HTTP/2-only endpoint); the caller checks readiness itself.
  for (; probe !== false;) {
    if (exited) throw new Error(`${name} exited (${JSON.stringify(exited)}) before it was ready:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready after ${timeoutMs} ms:\n${out}`);
    }
    try {
      const ok =
        typeof probe === 'function'
          ? await probe()
          : (await fetch(probe, { signal: AbortSignal.timeout(2000) })).status < 400;
      if (ok) break;
    } catch {
      // not listening yet
    }
    await sleep(150);
  }
  return {
    name,
    pid: child.pid,
    child,
    output: () => out,
    rss: () => rssOf(child.pid),
    peakRss: () => peakRssOf(child.pid),
    cpuMs: () => cpuMsOf(child.pid),
    async stop() {
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
  };
}

/**
 * Runs a node script to completion in its own process and parses the last stdout line as JSON.
 * role 'load' (a load generator, the default) or 'server' (e.g. the engine benchmark) decides
 * the pinning (bench/lib/runtime.mjs); `node` the binary (default: the suite's own).
 */
export function runNodeJson(script, args, { env = {}, nofile, timeoutMs = 120_000, role = 'load', node } = {}) {
  return new Promise((resolve, reject) => {
    const [cmd, argv] = pinned(role, node ?? process.execPath, [script, ...args]);
    const child = nofile
      ? spawn('bash', ['-c', `ulimit -n ${nofile} && exec "$0" "$@"`, cmd, ...argv], {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      const last = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(last));
      } catch (e) {
        reject(new Error(`${script} ${args.join(' ')} failed (${e.message}):\n${err}\n${out.slice(-2000)}`));
      }
    });
  });
}
