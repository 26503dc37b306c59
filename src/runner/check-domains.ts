import type { RawEventMeta, Settings } from '../config/settings.js';
import { suggestion } from '../core/suggest.js';

/**
 * What a built-in handler's `domain` must name (issue 24 item 5): `read`, `write` and `query` a
 * declared state, `task` and `action` one too (by default `tasks`, `actions`), `rest` an `http`
 * system. Checked by `sagaway validate` and at start, so that a typo is a located configuration
 * error instead of a 500 DOMAIN_NOT_FOUND at run time.
 */

type DomainKind = { of: 'state'; fallback?: string } | { of: 'http system' };

const BUILTIN_DOMAINS: Readonly<Record<string, DomainKind>> = {
  read: { of: 'state' },
  write: { of: 'state' },
  query: { of: 'state' },
  task: { of: 'state', fallback: 'tasks' },
  action: { of: 'state', fallback: 'actions' },
  rest: { of: 'http system' },
};

/** A domain that is only known at run time (inject placeholders): not checked. */
const PLACEHOLDER = /%%|\$\{\{|#\{\{/;

/**
 * The problem with an event's domain for the built-in `handler` (loaded as a built-in by its
 * runner), or undefined when it is fine or not the built-ins' to check.
 */
export function domainProblem(settings: Settings, handler: string, meta: RawEventMeta): string | undefined {
  const kind = Object.hasOwn(BUILTIN_DOMAINS, handler) ? BUILTIN_DOMAINS[handler] : undefined;
  if (kind === undefined) return undefined;
  const domain = meta.domain;
  if (typeof domain === 'string' && PLACEHOLDER.test(domain)) return undefined;
  const what = `${handler}.${meta.action}`;
  if (kind.of === 'http system') {
    const systems = Object.entries(settings.systems)
      .filter(([, s]) => s.type === 'http')
      .map(([name]) => name);
    if (domain !== undefined && systems.includes(domain)) return undefined;
    return domain === undefined
      ? `${what} needs a domain: the name of an http system${suggestion('', systems, 'http systems')}`
      : `domain "${domain}" names no http system${suggestion(domain, systems, 'http systems')}`;
  }
  const states = Object.keys(settings.states);
  const alias = domain ?? kind.fallback;
  if (alias !== undefined && Object.hasOwn(settings.states, alias)) return undefined;
  if (alias === undefined) return `${what} needs a domain: the alias of a state${suggestion('', states, 'states')}`;
  const named = domain === undefined ? `the default domain "${alias}"` : `domain "${alias}"`;
  return `${named} names no state${suggestion(alias, states, 'states')}`;
}
