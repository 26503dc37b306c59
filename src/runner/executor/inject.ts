import { SagawayError } from '../../core/errors.js';
import { readSlot } from '../../handlers/action-slot.js';
import { isForbiddenKey, isObject, parsePath, readPath } from '../../core/path.js';
import type { Payload, RequestContext } from '../../core/types.js';
import type { EffectiveSettings } from '../../config/effective-settings.js';
import type { SecretSource } from './secrets.js';

/**
 * Inject (DESIGN §6.4). With `inject: true`, string settings may hold placeholders, resolved once,
 * just before the call, by the runner that executes the event:
 *
 *   %%NAME%% / %%NAME|default%%   a variable: path = parameter `path_NAME` if set, else NAME;
 *                                 `$.` = payload root, `@.` = request context, else the input element
 *   ${{NAME}}                     a configured value (`values`)
 *   #{{NAME}}                     a secret (`secrets`)
 *   %%param_NAME%%                (events of an action record only) the TakeAction step's parameter
 *
 * CALLER DATA IS NEVER RESOLVED. This is the one place where text becomes a setting, and the
 * invariant is kept here: each configured string is scanned once, left to right, and text that a
 * placeholder produced (a payload value, a request field, an action record's parameter) is
 * spliced in and never scanned again. So a request body holding "#{{DB_PASSWORD}}" stays that
 * literal text on every path: a step's own settings, the layers of structural actions and stream
 * overrides (merged from configuration before this pass), nested sagas (their payload is data),
 * and action records, whose `%%param_<name>%%` slots are filled HERE, in the same pass, from the
 * event's `params` — never by filling the record first and injecting the result (that was a
 * second-order injection: issue 9). Without `inject`, only the slots are filled and every other
 * placeholder stays literal. `path_NAME` parameters are read as configured, so a slot in one
 * cannot let a caller choose which path a variable reads.
 *
 * A setting that is exactly one variable, value or slot takes the value with its JSON type
 * (`"%%qty%%"` -> 3); inside other text values are written as text (objects as JSON).
 */

const PLACEHOLDER =
  /%%([^%|]{1,128})(?:\|([^%]{0,256}))?%%|\$\{\{([A-Za-z0-9_.-]{1,128})\}\}|#\{\{([A-Za-z0-9_.-]{1,128})\}\}/g;
const MAX_RESULT_LENGTH = 64 * 1024;
/** A placeholder that a pass leaves as written (without `inject`, only slots are filled). */
const KEEP: unique symbol = Symbol('keep');
/** The variable names that are action record slots (`%%param_limit%%`); `action` names the record itself. */
const SLOT = /^param_([A-Za-z0-9_]{1,122})$/;

/** What placeholders resolve against. */
export interface InjectSources {
  payload: Payload;
  context: RequestContext;
  values: Readonly<Record<string, string>>;
  secrets: SecretSource;
  /** an action record's slot values (`%%param_<name>%%`): data, never scanned */
  params?: Readonly<Record<string, unknown>> | undefined;
}

/** The result: settings with placeholders resolved, and the secret values used (to scrub). */
export interface InjectResult {
  settings: EffectiveSettings;
  secretsUsed: string[];
}

/**
 * Resolve the placeholders in the string settings (domain, input/output elements, parameter
 * values): all of them with `settings.inject`, else only an action record's slots.
 */
export function injectSettings(settings: EffectiveSettings, src: InjectSources): InjectResult {
  const pass: Pass = { params: settings.parameters, src, secretsUsed: [], full: settings.inject };
  const resolver = (base: unknown) => (text: string) => resolveString(text, base, pass);

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
  return { settings: out, secretsUsed: pass.secretsUsed };
}

/** One inject pass over an event's settings. */
interface Pass {
  /** the configured parameters (for `path_NAME`) */
  params: Record<string, unknown>;
  src: InjectSources;
  secretsUsed: string[];
  /** resolve every placeholder (`inject: true`), or only action record slots */
  full: boolean;
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

function resolveString(text: string, input: unknown, pass: Pass): unknown {
  if (!text.includes('%%') && !text.includes('{{')) return text;
  PLACEHOLDER.lastIndex = 0;
  const whole = PLACEHOLDER.exec(text);
  if (whole && whole.index === 0 && whole[0].length === text.length && whole[4] === undefined) {
    const v = resolveOne(whole, input, pass);
    return v === KEEP ? text : v;
  }
  // The replacement is returned as is: String.replace never scans what a callback returns.
  const result = text.replace(PLACEHOLDER, (...m: string[]) => {
    const v = resolveOne(m as unknown as RegExpExecArray, input, pass);
    if (v === KEEP) return m[0] as string;
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
  if (result.length > MAX_RESULT_LENGTH) throw new SagawayError('INJECT_UNRESOLVED', 'an injected setting is too long');
  return result;
}

/** The value of one placeholder, or KEEP. */
function resolveOne(m: RegExpExecArray, input: unknown, pass: Pass): unknown {
  const [, varName, varDefault, valueName, secretName] = m;
  const { src } = pass;
  const slot = varName !== undefined && src.params !== undefined ? SLOT.exec(varName) : null;
  if (slot) return readSlot(slot[1] as string, varDefault, src.params as Readonly<Record<string, unknown>>);
  if (!pass.full) return KEEP;
  if (varName !== undefined) {
    const value = readVariable(varName, input, pass.params, src);
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
  if (secret !== '') pass.secretsUsed.push(secret);
  return secret;
}

function readVariable(name: string, input: unknown, params: Record<string, unknown>, src: InjectSources): unknown {
  const configured = params[`path_${name}`];
  const pathText = typeof configured === 'string' ? configured : name.trim();
  if (pathText.startsWith('@.')) return readPath(src.context, parsePath(pathText.slice(2)).segments);
  const path = parsePath(pathText);
  return readPath(path.root ? src.payload : input, path.segments);
}
