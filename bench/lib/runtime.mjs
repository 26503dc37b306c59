// Which Node binary runs the servers under test, and which CPUs servers and load generators are
// pinned to. Defaults: the suite's own Node, no pinning (what bench/run.mjs always did).
// bench/request-path.mjs sets them from --node and --pin before it starts anything.
import { execFileSync } from 'node:child_process';

const runtime = { node: process.execPath, serverCpu: null, loadCpu: null };

/** Sets the Node binary of the servers and, optionally, the CPUs of servers and load generators. */
export function configureRuntime({ node, serverCpu, loadCpu } = {}) {
  if (node) runtime.node = node;
  if (serverCpu !== undefined) runtime.serverCpu = serverCpu;
  if (loadCpu !== undefined) runtime.loadCpu = loadCpu;
}

/** The Node binary that runs the servers under test. */
export const serverNode = () => runtime.node;

/** The version string (`v24.21.0`) of the servers' Node binary. */
export const serverNodeVersion = () => execFileSync(runtime.node, ['--version'], { encoding: 'utf8' }).trim();

/**
 * [command, args] for a process of `role` ('server' or 'load'): wrapped in `taskset -c CPU` when
 * that role is pinned (taskset execs, so the pid stays the server's own).
 */
export function pinned(role, command, args) {
  const cpu = role === 'server' ? runtime.serverCpu : runtime.loadCpu;
  return cpu === null || cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}
