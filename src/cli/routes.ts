import type { ApiSettings, Settings } from '../config/settings.js';
import { formatIssue, SagawayError } from '../core/errors.js';
import { routeReport, type RouteReport } from '../gateway/apis/route-check.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/**
 * `sagaway routes [--config FILE]`: the resolved API -> runner -> saga table, with each API's
 * auth and methods, then the sagas that no API reaches. Warnings go to stderr.
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

/** The table as text: columns padded, one row per saga. */
export function formatRoutes(settings: Settings, report: RouteReport): string {
  const rows: string[][] = [['API', 'METHODS', 'AUTH', 'RUNNER', 'SAGA', 'SAGA PATH', 'SAGA METHODS']];
  settings.gateway.apis.forEach((api, i) => {
    const methods = api.methods ? api.methods.join(',') : 'any';
    const auth = authOf(api, report.closedApis.includes(i));
    const sagas = report.sagas.filter((s) => s.api === i);
    if (sagas.length === 0) rows.push([api.path, methods, auth, api.runner, '(no saga)', '', '']);
    for (const s of sagas) {
      const sagaMethods = (s.saga.methods ?? ['GET']).join(',') + (s.problem ? ' (not allowed by the API)' : '');
      rows.push([api.path, methods, auth, api.runner, s.saga.id, s.saga.path, sagaMethods]);
    }
  });
  for (const s of report.sagas) {
    if (s.api !== undefined) continue;
    rows.push(['(none: 404)', '', '', s.runner, s.saga.id, s.saga.path, (s.saga.methods ?? ['GET']).join(',')]);
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
