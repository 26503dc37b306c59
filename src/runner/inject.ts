import { SagawayError } from '../core/errors.js';
import { isForbiddenKey, isObject, parsePath, readPath } from '../core/path.js';
import type { Payload, RequestContext } from '../core/types.js';
import type { EffectiveSettings } from './effective-settings.js';
import type { SecretSource } from './secrets.js';

/**
 * Inject (DESIGN §6.4). With `inject: true`, string settings may hold placeholders, resolved once,
 * just before the call, by the runner that executes the event:
 *
 *   %%NAME%% / %%NAME|default%%   a variable: path = parameter `path_NAME` if set, else NAME;
 *                                 `$.` = payload root, `@.` = request context, else the input element
 *   ${{NAME}}                     a configured value (`values`)
 *   #{{NAME}}                     a secret (`secrets`)
 *
 * Each string is scanned once, left to right, and text that a placeholder produced is never
 * scanned again: a payload holding "#{{DB_PASSWORD}}" stays that literal text (no second-order
 * injection). A setting that is exactly one variable or value placeholder takes the value with its
 * JSON type (`"%%qty%%"` -> 3); inside other text values are written as text (objects as JSON).
 */

const PLACEHOLDER =
  /%%([^%|]{1,128})(?:\|([^%]{0,256}))?%%|\$\{\{([A-Za-z0-9_.-]{1,128})\}\}|#\{\{([A-Za-z0-9_.-]{1,128})\}\}/g;
const MAX_RESULT_LENGTH = 64 * 1024;

/** What placeholders resolve against. */
export interface InjectSources {
  payload: Payload;
  context: RequestContext;
  values: Readonly<Record<string, string>>;
  secrets: SecretSource;
}

/** The result: settings with placeholders resolved, and the secret values used (to scrub). */
export interface InjectResult {
  settings: EffectiveSettings;
  secretsUsed: string[];
}

/** Resolve every placeholder in the string settings (domain, input/output elements, parameter values). */
export function injectSettings(settings: EffectiveSettings, src: InjectSources): InjectResult {
  const secretsUsed: string[] = [];
  const pathParams = settings.parameters;
  const resolver = (base: unknown) => (text: string) => resolveString(text, base, pathParams, src, secretsUsed);

  // The input element is resolved first (relative names there read from the payload root), so
  // that the other settings can read variables relative to the input.
  const atRoot = resolver(src.payload);
  const inputElement =
    settings.inputElement === undefined ? undefined : asText(atRoot(settings.inputElement), 'inputElement');
  let input: unknown = src.payload;
  if (inputElement !== undefined && inputElement !== '$') {
    input = readPath(src.payload, parsePath(inputElement).segments);
  }
  const atInput = resolver(input);
  const out: EffectiveSettings = {
    ...settings,
    parameters: injectValue(settings.parameters, atInput, 0) as Record<string, unknown>,
  };
  if (inputElement !== undefined) out.inputElement = inputElement;
  if (settings.domain !== undefined) out.domain = asText(atInput(settings.domain), 'domain');
  if (settings.outputElement !== undefined)
    out.outputElement = asText(atInput(settings.outputElement), 'outputElement');
  return { settings: out, secretsUsed };
}

function asText(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new SagawayError('INJECT_UNRESOLVED', `${field} did not resolve to text`);
}

function injectValue(value: unknown, resolve: (s: string) => unknown, depth: number): unknown {
  if (depth > 32) throw new SagawayError('INJECT_UNRESOLVED', 'parameters nested too deeply');
  if (typeof value === 'string') return resolve(value);
  if (Array.isArray(value)) return value.map((v) => injectValue(v, resolve, depth + 1));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (isForbiddenKey(key)) continue;
      out[key] = injectValue(value[key], resolve, depth + 1);
    }
    return out;
  }
  return value;
}

function resolveString(
  text: string,
  input: unknown,
  params: Record<string, unknown>,
  src: InjectSources,
  secretsUsed: string[],
): unknown {
  if (!text.includes('%%') && !text.includes('{{')) return text;
  PLACEHOLDER.lastIndex = 0;
  const whole = PLACEHOLDER.exec(text);
  if (whole && whole.index === 0 && whole[0].length === text.length && whole[4] === undefined) {
    return resolveOne(whole, input, params, src, secretsUsed);
  }
  const result = text.replace(PLACEHOLDER, (...m: string[]) => {
    const v = resolveOne(m as unknown as RegExpExecArray, input, params, src, secretsUsed);
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
  if (result.length > MAX_RESULT_LENGTH) throw new SagawayError('INJECT_UNRESOLVED', 'an injected setting is too long');
  return result;
}

function resolveOne(
  m: RegExpExecArray,
  input: unknown,
  params: Record<string, unknown>,
  src: InjectSources,
  secretsUsed: string[],
): unknown {
  const [, varName, varDefault, valueName, secretName] = m;
  if (varName !== undefined) {
    const value = readVariable(varName, input, params, src);
    if (value !== undefined) return value;
    if (varDefault !== undefined) return varDefault;
    throw new SagawayError('INJECT_UNRESOLVED', `variable "${varName}" did not resolve and has no default`, {
      http: 400,
    });
  }
  if (valueName !== undefined) {
    if (Object.hasOwn(src.values, valueName)) return src.values[valueName];
    throw new SagawayError('INJECT_UNRESOLVED', `value "${valueName}" is not configured`);
  }
  const secret = src.secrets.get(secretName as string);
  if (secret === undefined) throw new SagawayError('INJECT_UNRESOLVED', `secret "${secretName}" is not set`);
  if (secret !== '') secretsUsed.push(secret);
  return secret;
}

function readVariable(name: string, input: unknown, params: Record<string, unknown>, src: InjectSources): unknown {
  const configured = params[`path_${name}`];
  const pathText = typeof configured === 'string' ? configured : name.trim();
  if (pathText.startsWith('@.')) return readPath(src.context, parsePath(pathText.slice(2)).segments);
  const path = parsePath(pathText);
  return readPath(path.root ? src.payload : input, path.segments);
}
