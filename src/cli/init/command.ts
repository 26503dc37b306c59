import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { SagawayError } from '../../core/errors.js';
import type { CliOptions } from '../args.js';
import { PACKAGE_ROOT } from '../package-info.js';
import { projectFiles } from './templates.js';

/**
 * `sagaway init [DIR] [--sagaway SPEC]`: write a new project into DIR (default the current
 * folder). Refuses a folder that already holds a sagaway.yaml or package.json, so that nothing
 * of the user's is overwritten.
 */
export async function initCommand(options: CliOptions, positionals: string[]): Promise<number> {
  if (positionals.length > 1)
    throw new SagawayError('VALIDATION_FAILED', 'init takes at most one DIR (see sagaway init --help)');
  const dir = resolve(positionals[0] ?? '.');
  for (const existing of ['sagaway.yaml', 'package.json']) {
    if (existsSync(join(dir, existing))) {
      throw new SagawayError('VALIDATION_FAILED', `${join(dir, existing)} exists: init writes only into a new project`);
    }
  }
  const files = projectFiles({ name: packageName(dir), sagaway: dependencySpec(options.sagaway) });
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, { flag: 'wx' });
  }
  const cd = dir === resolve('.') ? '' : `cd ${positionals[0]} && `;
  process.stdout.write(
    `created ${Object.keys(files).length} files in ${dir}\n\n` +
      `  ${cd}npm install && npm start     # http://127.0.0.1:8080/api/request/hello/Ada\n` +
      `  npm test\n\nNext: docs/first-saga.md of the sagaway package.\n`,
  );
  return 0;
}

/** An npm package name from the folder's name (lower case, url-safe). */
function packageName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 214);
  return name === '' ? 'my-saga' : name;
}

/**
 * How the project depends on sagaway: `--sagaway` as given when it is a version range, as
 * `file:` with an absolute path when it names a folder or a tarball, else this sagaway's own
 * folder (a checkout with `npm pack` not yet run works too, through a link).
 */
function dependencySpec(option: string | undefined): string {
  if (option === undefined) return `file:${PACKAGE_ROOT}`;
  if (option.startsWith('file:')) return `file:${resolve(option.slice(5))}`;
  const looksLocal = option.endsWith('.tgz') || option.startsWith('.') || isAbsolute(option) || existsSync(option);
  return looksLocal ? `file:${resolve(option)}` : option;
}
