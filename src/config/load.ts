import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { compileSettings, type Report } from './compile.js';
import { substituteEnv } from './env.js';
import type { RawConfig, RawSaga } from './schema.js';
import type { SagaDefinition, Settings } from './settings.js';
import { formatPath, validateConfig, validateSagaFile } from './validate.js';
import { parseYamlSource, type YamlSource } from './yaml-source.js';
import { sagaFiles } from './saga-files.js';

/** A loaded configuration, and the warnings found while loading it. */
export interface LoadedConfig {
  settings: Settings;
  warnings: ConfigIssue[];
}

export interface LoadOptions {
  /** environment for `${env:...}`; default process.env */
  env?: NodeJS.ProcessEnv;
  /** further checks on the compiled settings (e.g. handler versions), reporting located issues */
  check?: (settings: Settings, report: Report) => Promise<void>;
}

/**
 * Load, validate and compile a configuration file and the saga files its runners list.
 * Throws ConfigError carrying every error found (each located as FILE:LINE:COL PATH).
 */
export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const abs = resolve(file);
  const baseDir = dirname(abs);
  const issues: ConfigIssue[] = [];
  const sources = new Map<string, YamlSource>();
  const display = (f: string) => relative(process.cwd(), f) || f;

  const report: Report = (f, at, message, severity = 'error') => {
    const src = sources.get(f);
    const { line, col } = src ? src.locate(at) : { line: 1, col: 1 };
    issues.push({ file: display(f), line, col, path: formatPath(at), message, severity });
  };
  const fail = () => new ConfigError(issues.filter((i) => i.severity === 'error'));

  const parsed = await readSource(abs, display(abs), sources, issues);
  if (!parsed) throw fail();
  const value = envSubstituted(parsed.value, abs, env, report);
  issues.push(...notRepeated(validateConfig(value, parsed.source), issues));
  if (issues.some((i) => i.severity === 'error')) throw fail();
  const raw = value as RawConfig;

  const sagasByRunner = new Map<string, SagaDefinition[]>();
  for (const [name, runner] of Object.entries(raw.runners ?? {})) {
    const list: SagaDefinition[] = [];
    for (const [i, entry] of (runner.sagas ?? []).entries()) {
      if (typeof entry !== 'string') {
        list.push({ ...entry, source: { file: abs, at: ['runners', name, 'sagas', i] } });
        continue;
      }
      const files = await sagaFiles(entry, baseDir);
      if (files.length === 0) report(abs, ['runners', name, 'sagas', i], `no saga file matches "${entry}"`, 'warning');
      for (const f of files) list.push(...(await loadSagaFile(f, display(f), env, sources, issues, report)));
    }
    if (list.some(declaresSchemas))
      await (await ioSchemas()).resolveSchemaFiles(list, (f) => readSource(f, display(f), sources, issues), report);
    sagasByRunner.set(name, list);
  }
  const settings = compileSettings(raw, abs, baseDir, sagasByRunner, report);
  if ([...sagasByRunner.values()].some((list) => list.some(declaresSchemas)))
    (await ioSchemas()).compileIoSchemas(settings.runners, report);
  if (!issues.some((i) => i.severity === 'error') && options.check) await options.check(settings, report);
  if (issues.some((i) => i.severity === 'error')) throw fail();
  return { settings, warnings: issues.filter((i) => i.severity === 'warning') };
}

/** Whether a saga declares an input or output schema (then Ajv is loaded to compile them). */
function declaresSchemas(saga: RawSaga): boolean {
  return saga.inputSchema !== undefined || saga.outputSchema !== undefined;
}

/**
 * The schema compiler, loaded only for a configuration that declares schemas: Ajv is a large
 * module, and `sagaway validate` of a file without schemas should not pay for it (docs/cli.md).
 */
const ioSchemas = () => import('./io-schemas.js');

async function readSource(
  abs: string,
  shown: string,
  sources: Map<string, YamlSource>,
  issues: ConfigIssue[],
): Promise<{ source: YamlSource; value: unknown } | undefined> {
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (e) {
    issues.push({
      file: shown,
      line: 1,
      col: 1,
      path: '',
      message: `cannot read file (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      severity: 'error',
    });
    return undefined;
  }
  const source = parseYamlSource(shown, text);
  sources.set(abs, source);
  if (source.syntaxErrors.length > 0) {
    for (const e of source.syntaxErrors)
      issues.push({ file: shown, line: e.line, col: e.col, path: '', message: e.message, severity: 'error' });
    return undefined;
  }
  let value: unknown;
  try {
    value = source.doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    issues.push({ file: shown, line: 1, col: 1, path: '', message: (e as Error).message, severity: 'error' });
    return undefined;
  }
  return { source, value: value ?? {} };
}

/**
 * The schema's issues, less those at a place that already has one: an unset `${env:…}` leaves an
 * empty value there, which the schema would report again in its own words (one line per error).
 */
function notRepeated(found: ConfigIssue[], before: readonly ConfigIssue[]): ConfigIssue[] {
  const taken = new Set(before.map((i) => `${i.file}\0${i.path}`));
  return found.filter((i) => !taken.has(`${i.file}\0${i.path}`));
}

function envSubstituted(value: unknown, file: string, env: NodeJS.ProcessEnv, report: Report): unknown {
  const { value: out, problems } = substituteEnv(value, env);
  for (const p of problems) report(file, p.at, `environment variable ${p.name} is not set and has no default`);
  return out;
}

async function loadSagaFile(
  abs: string,
  shown: string,
  env: NodeJS.ProcessEnv,
  sources: Map<string, YamlSource>,
  issues: ConfigIssue[],
  report: Report,
): Promise<SagaDefinition[]> {
  const parsed = await readSource(abs, shown, sources, issues);
  if (!parsed) return [];
  const value = envSubstituted(parsed.value, abs, env, report);
  const problems = validateSagaFile(value, parsed.source);
  issues.push(...notRepeated(problems, issues));
  if (problems.length > 0) return [];
  const sagas = Array.isArray(value) ? (value as RawSaga[]) : [value as RawSaga];
  return sagas.map((saga, i) => ({ ...saga, source: { file: abs, at: Array.isArray(value) ? [i] : [] } }));
}
