import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Runnable blocks of the docs. A fenced block is runnable when the line right before it is an
 * HTML comment (invisible on GitHub):
 *
 *   <!-- runnable -->             sh: run with bash (set -e); yaml: a whole configuration that
 *                                 `sagaway validate` must accept
 *   <!-- runnable: file PATH -->  write the block to PATH (relative to the session's folder)
 *   <!-- runnable: background --> sh: start it in the background (a server), wait until
 *                                 /readyz answers on the session's port; the previous one is stopped
 *
 * In a runnable sh block, a comment line `# → TEXT` is expected output: TEXT must appear in what
 * the block printed. In docs read in the checkout, `npx sagaway` runs the checkout's build (a
 * `sagaway` on PATH); in the first-saga guide it runs as written, from the project's node_modules.
 */

/** One fenced block of a Markdown file, with its marker. */
export interface Block {
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  lang: string;
  /** what follows `runnable` in the marker: '', `file PATH`, `background` */
  marker: string;
  text: string;
}

const MARKER = /^<!--\s*runnable(?::\s*(.*?))?\s*-->\s*$/;
const FENCE = /^```(\S*)\s*$/;

/** The runnable blocks of a Markdown text (a marker before anything but a fence is an error). */
export function runnableBlocks(markdown: string, file: string): Block[] {
  const lines = markdown.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!);
    if (!m) continue;
    const fence = FENCE.exec(lines[i + 1] ?? '');
    if (!fence) throw new Error(`${file}:${i + 1}: a runnable marker must be right before a code fence`);
    const end = lines.findIndex((l, j) => j > i + 1 && l.startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 2}: unclosed code fence`);
    out.push({
      file,
      line: i + 2,
      lang: fence[1] ?? '',
      marker: (m[1] ?? '').trim(),
      text: lines.slice(i + 2, end).join('\n') + '\n',
    });
    i = end;
  }
  return out;
}

/** Where and how a document's blocks run; blocks of one document share it, in order. */
export interface Session {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** port of the background server (`localhost:8080` in blocks is rewritten to it) */
  port?: number;
  /** per-block time limit, ms */
  timeoutMs: number;
  /** `npx sagaway` runs the checkout's build (docs read in the checkout); else it runs as written */
  checkoutSagaway?: boolean;
  background?: ChildProcess;
}

/** A folder with a `sagaway` command that runs this checkout's build. */
export function sagawayOnPath(): string {
  const bin = mkdtempSync(join(tmpdir(), 'sagaway-bin-'));
  const cli = resolve('dist', 'src', 'cli', 'main.js');
  writeFileSync(join(bin, 'sagaway'), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
  chmodSync(join(bin, 'sagaway'), 0o755);
  return bin;
}

/** The block's text as it runs: `npx sagaway` is the checkout's, port 8080 the session's. */
function rewrite(text: string, session: Session): string {
  let out = session.checkoutSagaway ? text.replace(/\bnpx sagaway\b/g, 'sagaway') : text;
  if (session.port !== undefined) out = out.replace(/\blocalhost:8080\b/g, `127.0.0.1:${session.port}`);
  return out;
}

/** Expected output lines (`# → TEXT`) of a block. */
export function expectations(text: string): string[] {
  return text
    .split('\n')
    .map((l) => /^\s*# → (.*)$/.exec(l)?.[1]?.trim())
    .filter((e): e is string => e !== undefined && e !== '');
}

/** Run one block; throws with the block's location and output when it fails. */
export async function runBlock(block: Block, session: Session): Promise<string> {
  const where = `${block.file}:${block.line}`;
  if (block.marker.startsWith('file ')) {
    const path = join(session.cwd, block.marker.slice(5).trim());
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, block.text);
    return '';
  }
  if (block.lang === 'yaml' && block.marker === '') {
    const dir = mkdtempSync(join(tmpdir(), 'sagaway-doc-yaml-'));
    const file = join(dir, 'sagaway.yaml');
    writeFileSync(file, block.text);
    const r = spawnSync(process.execPath, [resolve('dist', 'src', 'cli', 'main.js'), 'validate', '--config', file], {
      encoding: 'utf8',
      env: session.env,
      timeout: session.timeoutMs,
    });
    if (r.status !== 0) throw new Error(`${where}: sagaway validate failed:\n${r.stdout}${r.stderr}`);
    return r.stdout;
  }
  if (!['sh', 'bash', 'shell'].includes(block.lang)) throw new Error(`${where}: cannot run a ${block.lang} block`);
  const script = rewrite(block.text, session);
  if (block.marker === 'background') {
    await stopBackground(session);
    const child = spawn('bash', ['-c', script], {
      cwd: session.cwd,
      env: session.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    session.background = child;
    const deadline = Date.now() + session.timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${where}: the background command exited:\n${output}`);
      const ready = await fetch(`http://127.0.0.1:${session.port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return output;
      if (Date.now() > deadline) throw new Error(`${where}: not ready in time:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const pwdFile = join(mkdtempSync(join(tmpdir(), 'sagaway-doc-pwd-')), 'pwd');
  const r = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn('bash', ['-c', `set -eo pipefail\n${script}\npwd > "${pwdFile}"`], {
      cwd: session.cwd,
      env: session.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), session.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
  if (r.code !== 0) throw new Error(`${where}: exit ${r.code}:\n${script}\n---\n${r.output}`);
  for (const e of expectations(block.text)) {
    const squash = (s: string) => s.replace(/\s+/g, ' ');
    if (!squash(r.output).includes(squash(e)))
      throw new Error(`${where}: expected output "${e}" not printed:\n${r.output}`);
  }
  session.cwd = readFileSync(pwdFile, 'utf8').trim();
  return r.output;
}

/** Stop the session's background server (its whole process group). */
export async function stopBackground(session: Session): Promise<void> {
  const child = session.background;
  session.background = undefined;
  if (!child || child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}
