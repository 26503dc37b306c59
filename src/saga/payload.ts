import { SagawayError } from '../core/errors.js';
import { isObject, parsePathCached, readPath, safeAssign, writePath, type PayloadPath } from '../core/path.js';
import type { Payload } from '../core/types.js';

/** An outputElement: a path, `$` (replace the payload) or `-` (discard). */
export type OutputSpec =
  { readonly kind: 'path'; readonly path: PayloadPath } | { readonly kind: 'root' } | { readonly kind: 'discard' };

/** Parse an outputElement value. */
export function parseOutputSpec(text: string): OutputSpec {
  if (text === '-') return { kind: 'discard' };
  if (text === '$') return { kind: 'root' };
  return { kind: 'path', path: parsePathCached(text) };
}

/**
 * Writing an event's output into the payload (DESIGN §6.2). Returns the payload to continue
 * with: the same object, or the output itself when it replaces the whole payload.
 *
 *   outputElement `-`        discard
 *   outputElement `$`        the output (an object) replaces the payload
 *   outputElement `$.a.b`    written at a.b from the root, the input element ignored
 *   outputElement `a.b`      written at <inputElement>.a.b (or a.b from the root without one)
 *   absent, inputElement set the output replaces the input at inputElement
 *   absent, no inputElement  an object output is merged (shallow) into the root; others dropped
 */
export function writeEventOutput(
  payload: Payload,
  output: unknown,
  inputElement: string | null,
  outputElement: string | null,
): Payload {
  return writeParsedOutput(payload, output, parseElements(inputElement, outputElement));
}

/** An event's input and output elements, parsed (`input` `$` = the whole payload, null = not set). */
export interface ParsedElements {
  readonly input: PayloadPath | '$' | null;
  readonly output: OutputSpec | null;
}

/** Parse an event's effective elements (the plan does it once for the step's own). */
export function parseElements(inputElement: string | null, outputElement: string | null): ParsedElements {
  return {
    input: inputElement === null ? null : inputElement === '$' ? '$' : parsePathCached(inputElement),
    output: outputElement === null ? null : parseOutputSpec(outputElement),
  };
}

/** writeEventOutput over elements parsed beforehand. */
export function writeParsedOutput(payload: Payload, output: unknown, elements: ParsedElements): Payload {
  const input = elements.input === '$' ? null : elements.input;
  if (elements.output === null) {
    if (input === null) {
      if (elements.input === '$') return replaceRoot(output);
      if (isObject(output)) safeAssign(payload, output);
      return payload;
    }
    writePath(payload, input.segments, output);
    return payload;
  }
  return writeOutput(payload, output, elements.output, input?.segments ?? []);
}

/** Write a result at an output spec; `base` is prepended to relative paths. */
export function writeOutput(
  payload: Payload,
  output: unknown,
  spec: OutputSpec,
  base: readonly (string | number)[],
): Payload {
  switch (spec.kind) {
    case 'discard':
      return payload;
    case 'root':
      return replaceRoot(output);
    case 'path': {
      const segments = spec.path.root ? spec.path.segments : [...base, ...spec.path.segments];
      if (segments.length === 0) return replaceRoot(output);
      writePath(payload, segments, output);
      return payload;
    }
  }
}

function replaceRoot(output: unknown): Payload {
  if (!isObject(output))
    throw new SagawayError('OUTPUT_NOT_OBJECT', 'an output that replaces the payload must be an object');
  return output;
}

/** The response of a saga (DESIGN §4.1): the payload without `parameters`, or the part at outputElement. */
export function responseOf(payload: Payload, output: OutputSpec | undefined): unknown {
  if (output?.kind === 'path') return readPath(payload, output.path.segments);
  if (output?.kind === 'root') return payload;
  // safeAssign: a payload replaced by parsed JSON may own a `__proto__` key, which a plain
  // assignment would turn into the response's prototype.
  const response: Payload = {};
  safeAssign(response, payload);
  delete response['parameters'];
  return response;
}
