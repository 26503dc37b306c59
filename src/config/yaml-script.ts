import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { DocumentOptions, ParseOptions, SchemaOptions } from 'yaml';
import { runCompiledScript } from './compiled-script.js';

/**
 * The `yaml` package as one script with V8's code cache, written by `npm run build`
 * (write-yaml-script.ts): loading it and parsing the first file cost ≈ 25 ms less CPU than
 * require('yaml') of its ≈ 70 files (issue 23, `sagaway validate`). Without the script (a build
 * that skipped that step) the package itself is required; the cache only fits the Node that
 * built it, any other compiles the script.
 */
export const YAML_SCRIPT = fileURLToPath(new URL('./yaml.generated.vm.js', import.meta.url));

/** How configuration and saga files are parsed (yaml-source.ts; the build's cache parses alike). */
export const YAML_PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  prettyErrors: false,
  uniqueKeys: true,
};

let yaml: typeof import('yaml') | undefined;

/** The YAML parser, loaded at the first file parsed. */
export function yamlParser(): typeof import('yaml') {
  return (yaml ??= load());
}

function load(): typeof import('yaml') {
  const require = createRequire(import.meta.url);
  try {
    return runCompiledScript(YAML_SCRIPT, require)['main'] as typeof import('yaml');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return require('yaml') as typeof import('yaml');
  }
}
