import { isForbiddenKey } from '../core/path.js';

/**
 * `${env:NAME}` and `${env:NAME:-default}` (DESIGN §3). Replaced in string values after the
 * YAML is parsed, so an environment value can never add structure to the file; nothing else is
 * ever evaluated.
 */
const ENV_TOKEN = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * YAML does not allow `{` in a plain scalar inside a flow mapping, so
 * `{ url: ${env:DATABASE_URL} }` (the form DESIGN §3 shows) would not parse. Before parsing,
 * wrap such a token in double quotes when it starts a scalar outside quotes and comments.
 */
export function quoteBareEnvTokens(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.includes('${env:')) return line;
      let out = '';
      let quote: '"' | "'" | null = null;
      for (let i = 0; i < line.length; i++) {
        const ch = line[i] as string;
        if (quote) {
          if (ch === '\\' && quote === '"') {
            out += ch + (line[i + 1] ?? '');
            i++;
            continue;
          }
          if (ch === quote) quote = null;
          out += ch;
          continue;
        }
        if (ch === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return out + line.slice(i);
        if (ch === '"' || ch === "'") {
          if (startsScalar(out)) quote = ch;
          out += ch;
          continue;
        }
        if (ch === '$' && line.startsWith('${env:', i) && startsScalar(out)) {
          ENV_TOKEN.lastIndex = i;
          const m = ENV_TOKEN.exec(line);
          if (m && m.index === i) {
            out += JSON.stringify(m[0]);
            i += m[0].length - 1;
            continue;
          }
        }
        out += ch;
      }
      return out;
    })
    .join('\n');
}

/** Whether the text so far ends where a YAML scalar may begin. */
function startsScalar(before: string): boolean {
  return /(?:^\s*|^\s*-\s+|:\s+|[[{,]\s*)$/.test(before);
}

/** A reference to an unset variable without a default. */
export interface EnvProblem {
  at: (string | number)[];
  name: string;
}

/** Replace env tokens in every string of `value`; returns the new value and the unset names. */
export function substituteEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  at: (string | number)[] = [],
  problems: EnvProblem[] = [],
): { value: unknown; problems: EnvProblem[] } {
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === 'string') {
      if (!v.includes('${env:')) return v;
      return v.replace(ENV_TOKEN, (_m, name: string, def: string | undefined) => {
        const got = env[name];
        if (got !== undefined) return got;
        if (def !== undefined) return def;
        problems.push({ at: path, name });
        return '';
      });
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (isForbiddenKey(k)) continue;
        out[k] = walk(x, [...path, k]);
      }
      return out;
    }
    return v;
  };
  return { value: walk(value, at), problems };
}
