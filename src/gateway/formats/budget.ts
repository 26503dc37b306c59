/**
 * The byte budget of a rendered body (`gateway.limits.maxResponse`). Renderers that build a body
 * piece by piece count as they go and stop once they are over, so an oversized response costs
 * at most the budget in text, not its full rendering.
 */

/** What render() returns for a body over its budget (502 RESPONSE_TOO_LARGE). */
export const TOO_LARGE = Symbol('response too large');

/** Whether `text` takes more than `max` bytes in UTF-8; most texts are decided without counting. */
export function overBudget(text: string, max: number): boolean {
  // A UTF-16 code unit takes 1 to 3 bytes in UTF-8.
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text, 'utf8') > max;
}

/** Thrown by Parts.push to unwind a renderer; one preallocated value, no stack trace taken. */
export const OVER = Object.freeze({ over: true });

/** The pieces of a body and their running length; push throws OVER once the budget is passed. */
export class Parts {
  private readonly parts: string[] = [];
  private units = 0;

  constructor(private readonly max: number) {}

  /** Append text; throws OVER when the body is certainly over the budget. */
  push(text: string): void {
    this.units += text.length;
    // Code units never exceed bytes: past the budget in units is past it in bytes.
    if (this.units > this.max) throw OVER;
    this.parts.push(text);
  }

  /** The body, or TOO_LARGE when its exact UTF-8 size is over the budget. */
  join(): string | typeof TOO_LARGE {
    const body = this.parts.join('');
    return overBudget(body, this.max) ? TOO_LARGE : body;
  }
}

/** Run a renderer over Parts: its body, or TOO_LARGE when it stopped over the budget. */
export function renderWithin(max: number, fill: (out: Parts) => void): string | typeof TOO_LARGE {
  const out = new Parts(max);
  try {
    fill(out);
  } catch (err) {
    if (err === OVER) return TOO_LARGE;
    throw err;
  }
  return out.join();
}
