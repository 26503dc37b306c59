import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The saga files an entry of `runners.R.sagas` names (a glob, relative to the configuration's
 * folder), sorted. The usual entry (`./sagas/*.yaml`: wildcards `*` and `?` in the file name
 * only) is read from its folder directly; any other glob goes to tinyglobby, loaded then:
 * loading it (with picomatch) was ≈ 15 ms of `sagaway validate` (issue 23). Both read the
 * entry alike: `*` matches no `/` and no leading dot, only files (a link to a file is one).
 */
export async function sagaFiles(entry: string, baseDir: string): Promise<string[]> {
  const name = basename(entry);
  const folder = dirname(entry);
  const simple =
    !/[*?[\]{}()!+@\\]/.test(folder) && /^[^[\]{}()!+@\\]*$/.test(name) && name !== '' && !name.includes('**');
  if (!simple) {
    const { glob } = await import('tinyglobby');
    return (await glob(entry, { cwd: baseDir, absolute: true, onlyFiles: true })).sort();
  }
  const dir = resolve(baseDir, folder);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const pattern = new RegExp(
    `^${name
      .replace(/[.+^${}()|\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')}$`,
  );
  const out: string[] = [];
  for (const n of names) {
    if (!pattern.test(n) || (n.startsWith('.') && !name.startsWith('.'))) continue;
    const abs = join(dir, n);
    if ((await stat(abs).catch(() => undefined))?.isFile()) out.push(abs);
  }
  return out.sort();
}
