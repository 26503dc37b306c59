import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** The built CLI. */
export const CLI = resolve('dist', 'src', 'cli', 'main.js');

/** Run the CLI to the end. */
export function sagaway(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    ...(cwd ? { cwd } : {}),
  });
}

/** A `sagaway start` process, and every log line it wrote until it was listening. */
export interface Started {
  child: ChildProcess;
  port: number;
  /** the JSON log lines, parsed */
  lines: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** Start `sagaway start ARGS` and wait for its `sagaway started` line (fails after 20 s). */
export function startSagaway(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'start', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return new Promise((resolveStarted, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`sagaway start did not start: ${stderr}`));
    }, 20_000);
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          lines.push(parsed);
          if (parsed['msg'] === 'sagaway started') {
            clearTimeout(timer);
            resolveStarted({ child, port: parsed['port'] as number, lines, stop });
          }
        } catch {
          // not a log line
        }
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sagaway start exited with ${code}: ${stderr}`));
    });
  });
}
