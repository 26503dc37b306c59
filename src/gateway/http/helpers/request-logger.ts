import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import type { Logger } from '../../../core/logger.js';

/**
 * fastify makes a child logger (`request.log`, bound to the request id) for every request, before
 * any hook runs: with pino that is an object, a prototype and the bindings serialised to JSON,
 * ≈ 1 µs and its garbage per request (issue 23: bench/profile-oneshot.mjs). Nearly no request
 * logs through it (the access line is written by the parent, server.ts), so the child is made at
 * its first use instead: `requestLoggers(log)` is the instance handed to fastify, and its `child`
 * returns a LazyChild. What is logged, and how, is pino's as before.
 */

type LogFn = (...args: unknown[]) => void;

/** A request's logger: the pino child of `parent` with `bindings`, made when something logs. */
class LazyChild {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger | LazyChild,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child (and its parents', when they are lazy too), made now if not yet. */
  get real(): FastifyBaseLogger {
    if (this.made === undefined) {
      const parent = this.parent instanceof LazyChild ? this.parent.real : this.parent;
      this.made = parent.child(this.bindings, this.options);
    }
    return this.made;
  }

  get level(): string {
    return this.real.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.real.fatal as LogFn)(...args);
  }

  error(...args: unknown[]): void {
    (this.real.error as LogFn)(...args);
  }

  warn(...args: unknown[]): void {
    (this.real.warn as LogFn)(...args);
  }

  info(...args: unknown[]): void {
    (this.real.info as LogFn)(...args);
  }

  debug(...args: unknown[]): void {
    (this.real.debug as LogFn)(...args);
  }

  trace(...args: unknown[]): void {
    (this.real.trace as LogFn)(...args);
  }

  silent(...args: unknown[]): void {
    (this.real.silent as LogFn)(...args);
  }

  isLevelEnabled(level: string): boolean {
    return (this.real as unknown as Logger).isLevelEnabled(level);
  }

  // fastify's plugins get a child of the root, and each request a child of its plugin's: lazy too
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new LazyChild(this, bindings, options ?? {}) as unknown as FastifyBaseLogger;
  }
}

/**
 * The logger instance for fastify: `log` itself (every method and property is pino's), except
 * that the children fastify makes per request are LazyChild.
 */
export function requestLoggers(log: Logger): FastifyBaseLogger {
  const root = log as unknown as FastifyBaseLogger;
  const wrapper = Object.create(root) as FastifyBaseLogger;
  // pino's methods read the instance's symbols through `this`; the prototype chain serves them,
  // and the level setter is left to the real instance (an own property on the wrapper would
  // shadow later changes).
  Object.defineProperty(wrapper, 'level', {
    get: () => root.level,
    set: (level: string) => {
      root.level = level;
    },
  });
  wrapper.child = (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger =>
    new LazyChild(root, bindings, options ?? {}) as unknown as FastifyBaseLogger;
  return wrapper;
}
