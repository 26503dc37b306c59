import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishedSchema } from './schema.js';

/** Where the published schema lives, relative to this compiled file (dist/src/config). */
export const SCHEMA_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'schema',
  'sagaway.schema.json',
);

/** The schema file's exact text, generated from src/config/schema.ts. */
export function schemaText(): string {
  return `${JSON.stringify(publishedSchema(), null, 2)}\n`;
}

// `npm run schema` writes the file; `--check` exits 1 when it is stale.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const current = readFileSync(SCHEMA_FILE, 'utf8');
    if (current !== schemaText()) {
      process.stderr.write('schema/sagaway.schema.json is stale: run `npm run schema`\n');
      process.exit(1);
    }
  } else {
    writeFileSync(SCHEMA_FILE, schemaText());
    process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
  }
}
