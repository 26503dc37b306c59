import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { ConsoleSettings, Settings } from '../../config/settings.js';
import type { TraceSource } from '../../core/trace.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import type { StatusSource } from '../../core/messages.js';
import type { RunAdmin } from '../../core/runs.js';
import { consoleGuard, stillAllowed, wouldPass } from './access.js';
import type { OnUnauthorized } from '../forms/admit.js';
import { adminGuard } from '../runs/routes.js';
import { ConsoleFeed } from './feed.js';

/**
 * The console's routes under `gateway.console.path` (docs/console.md): the page and its two
 * assets (shipped in the package's `assets/console/`, no CDN, no font), the model of the
 * configuration, the live feed of runs and the journal's latest runs. Every route passes the
 * console's guard (loopback or roles). The page runs under a strict CSP: scripts and styles only
 * from the console itself, no inline script or style, connections only to this origin.
 */

/** CSP of the console page. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

/** How long after the gateway listens the console's model is built, if no one asked for it. */
const WARM_AFTER_LISTEN_MS = 200;

/** Journaled runs listed at most. */
const JOURNAL_RUNS = 50;

/** The folder of the console's assets, from dist/src/gateway/console or src/gateway/console. */
function assetsFolder(): string {
  for (const up of ['../../../../assets/console/', '../../../assets/console/']) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(dir + 'index.html')) return dir;
  }
  throw new Error('the console assets (assets/console) are missing from this installation');
}

interface Asset {
  type: string;
  body: string;
}

/** Content types of the files the console folder may hold. */
const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/**
 * The page (at the console's path) and every script, style and icon of the folder at
 * `<path>/<file>`: the page's script is split into modules, each one more file here.
 */
function loadAssets(base: string): Record<string, Asset> {
  const dir = assetsFolder();
  const read = (name: string) => readFileSync(dir + name, 'utf8');
  const assets: Record<string, Asset> = {
    '': { type: 'text/html; charset=utf-8', body: read('index.html').replaceAll('{{BASE}}', base) },
  };
  for (const name of readdirSync(dir).sort()) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type !== undefined) assets['/' + name] = { type, body: read(name) };
  }
  return assets;
}

/** What the console is built from. */
export interface ConsoleOptions {
  settings: Settings;
  console: ConsoleSettings;
  /** where traced runs come from (this process's runners, or the runners' traces over NATS) */
  traces: readonly TraceSource[];
  status?: StatusSource;
  /** the journals' run list (GET /api/runs): the console's list of runs reads it */
  runs?: RunAdmin;
  /** what a request refused for its credential goes through (the rate limit counts it, as on the APIs) */
  onUnauthorized?: OnUnauthorized;
}

/** Register the console; returns its feed (closed with the gateway). */
export function registerConsole(app: FastifyInstance, ctx: GatewayContext, options: ConsoleOptions): ConsoleFeed {
  const base = options.console.path;
  const guard = consoleGuard(ctx, options.console, options.onUnauthorized);
  const assets = loadAssets(base);
  // Laid out at the first request for it, or just after the gateway listens: a gateway that does
  // not start with dagre and the layout of every saga answers ≈ 100 ms sooner (issue 23). A
  // failed build is tried again at the next request.
  let model: Promise<string> | undefined;
  const modelText = (): Promise<string> =>
    (model ??= import('./model.js')
      .then(({ buildModel }) => JSON.stringify(buildModel(options.settings)))
      .catch((err: unknown) => {
        model = undefined;
        throw err;
      }));
  app.addHook('onListen', (done) => {
    setTimeout(() => void modelText().catch(() => undefined), WARM_AFTER_LISTEN_MS).unref();
    done();
  });
  const feed = new ConsoleFeed(ctx, options.traces);
  const route = (url: string, handler: RouteHandlerMethod) =>
    app.route({ method: 'GET', url, exposeHeadRoute: false, onRequest: guard, handler });

  for (const [suffix, asset] of Object.entries(assets)) {
    const send: RouteHandlerMethod = (_req, reply) => reply.headers(PAGE_HEADERS).type(asset.type).send(asset.body);
    route(base + suffix, send);
    if (suffix === '') route(base + '/', send);
  }
  route(`${base}/api/model`, async (req, reply) => {
    let text: string;
    try {
      text = await modelText();
    } catch {
      return sendProblem(reply, problemFor('INTERNAL', req.id, 'the console model cannot be built'));
    }
    return reply.header('cache-control', 'no-store').type('application/json').send(text);
  });
  const recheck = options.console.roles.length > 0 ? stillAllowed.bind(null, ctx, options.console) : undefined;
  route(`${base}/api/feed`, (req, reply) => feed.open(req, reply, recheck && (() => recheck(req))));
  route(`${base}/api/journal`, async (req, reply) => {
    const status = options.status;
    const runs = options.runs;
    if (!runs && !status?.recent) return reply.header('cache-control', 'no-store').send({ runs: [] });
    try {
      // the run list of GET /api/runs (newest first, through the journal's index), else the older list
      const list = runs ? (await runs.list({ limit: JOURNAL_RUNS })).runs : await status!.recent!(JOURNAL_RUNS);
      // whether this caller may redrive and abort (gateway.admin): the page shows those buttons then
      const operate = runs !== undefined && (await wouldPass(ctx, adminGuard(ctx), req));
      return reply.header('cache-control', 'no-store').send({ runs: list, operate });
    } catch {
      return sendProblem(reply, problemFor('STATE_UNAVAILABLE', req.id, 'the journal cannot be read now'));
    }
  });
  // `npm start`, then http://localhost:8080: the console, not a JSON 404 (unless static files own `/`).
  // The same for the icon browsers ask every site for: the console's own, not a 404.
  if (ctx.settings.static === undefined) {
    route('/', (_req, reply) => reply.redirect(base, 302));
    const icon = assets['/favicon.svg'];
    if (icon) route('/favicon.ico', (_req, reply) => reply.headers(PAGE_HEADERS).type(icon.type).send(icon.body));
  }
  return feed;
}
