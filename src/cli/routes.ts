import type { ApiSettings, SagaDefinition, Settings } from '../config/settings.js';
import { FORM_PREFIX } from '../gateway/apis/saga-path.js';
import { formatIssue, SagawayError } from '../core/errors.js';
import { routeReport, type RouteReport } from '../gateway/apis/route-check.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/**
 * `sagaway routes [--config FILE]`: the resolved API -> runner -> saga table, with each API's
 * auth and methods, each saga's own roles (checked on top of the API's) and the URLs a client
 * calls, then the sagas that no API reaches. Warnings go to stderr.
 */
export async function routesCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('routes', positionals);
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('VALIDATION_FAILED', 'no --config given and no ./sagaway.yaml here');
  const { settings, warnings } = await loadChecked(file);
  process.stdout.write(formatRoutes(settings, routeReport(settings)));
  for (const w of warnings) process.stderr.write(`${formatIssue(w)} (warning)\n`);
  return 0;
}

/** Who may call an API entry. */
function authOf(api: ApiSettings, closed: boolean): string {
  if (api.public) return 'public';
  if (closed) return 'nobody (no gateway.auth)';
  return api.roles.length > 0 ? `roles ${api.roles.join('|')}` : 'authenticated';
}

/** A saga's own roles, checked on top of its API entry's auth. */
function sagaRoles(saga: SagaDefinition): string {
  return saga.roles && saga.roles.length > 0 ? saga.roles.join('|') : '-';
}

/** The URLs a client calls for a saga: both forms (DESIGN §1), the one-shot only with a wait step (docs/waits.md). */
function urlsOf(saga: SagaDefinition): string {
  const path = saga.path === '/' ? '' : saga.path;
  if (saga.steps.some((s) => s.type === 'wait')) return `${FORM_PREFIX.request}${path}`;
  return `${FORM_PREFIX.request}${path} ${FORM_PREFIX.stream}${path}`;
}

/** The table as text: columns padded, one row per saga and API entry that serves it. */
export function formatRoutes(settings: Settings, report: RouteReport): string {
  const rows: string[][] = [
    ['API', 'METHODS', 'AUTH', 'RUNNER', 'SAGA', 'SAGA PATH', 'SAGA METHODS', 'SAGA ROLES', 'URLS'],
  ];
  settings.gateway.apis.forEach((api, i) => {
    const methods = api.methods ? api.methods.join(',') : 'any';
    const auth = authOf(api, report.closedApis.includes(i));
    const served = report.sagas.flatMap((s) => {
      const via = s.via.find((v) => v.api === i);
      if (via) return [{ s, methods: via.methods.join(',') }];
      // A saga whose API entry allows none of its methods: listed under that entry, flagged.
      if (s.api === i && s.problem)
        return [{ s, methods: `${(s.saga.methods ?? ['GET']).join(',')} (not allowed by the API)` }];
      return [];
    });
    if (served.length === 0) rows.push([api.path, methods, auth, api.runner, '(no saga)', '', '', '', '']);
    for (const { s, methods: sagaMethods } of served) {
      const urls = s.problem ? '' : urlsOf(s.saga);
      rows.push([api.path, methods, auth, api.runner, s.saga.id, s.saga.path, sagaMethods, sagaRoles(s.saga), urls]);
    }
  });
  for (const s of report.sagas) {
    if (s.api !== undefined) continue;
    const methods = (s.saga.methods ?? ['GET']).join(',');
    rows.push(['(none: 404)', '', '', s.runner, s.saga.id, s.saga.path, methods, sagaRoles(s.saga), '']);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map(
      (r) =>
        r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd() + '\n',
    )
    .join('');
}
