/** The help texts of the `sagaway` command: one overview, and one page per command. */

export const USAGE = `sagaway — API gateway and saga engine

Usage: sagaway COMMAND [options]      (sagaway COMMAND --help for one command)

  sagaway init     [DIR]                a new project: config, handler, sagas, a test
  sagaway start    [--config FILE] [--port N] [--host H]
                                        gateway and every runner in one process
  sagaway gateway  --config FILE [--port N] [--host H]
                                        the gateway alone; reaches runners over NATS
  sagaway runner   --config FILE --runner NAME [--deployment ID] [--port N] [--host H]
                                        one replica of a runner deployment
  sagaway validate [--config FILE]      check the file and every saga
  sagaway run      [--config FILE] [-X M] [-d JSON] [--user SUB --roles a,b]
                   [--clock TIME] [--advance DURATION]... PATH
                                        run one saga in process, print its outcome
  sagaway routes   [--config FILE]      the API -> runner -> saga table, with auth and methods
  sagaway token    [--config FILE] --sub SUB [--roles a,b] [--ttl 1h]
                                        a development JWT signed with gateway.auth.jwt.secret
  sagaway admin    consumers|remove-consumers|runs --config FILE [...]
                                        durable consumers of retired deployments, runs in flight

  --version                             print the version
  --help, -h                            this text

--config defaults to ./sagaway.yaml (start: else the bundled todo example).
Exit codes: 0 success (run: SUCCESS or ACK), 1 failure (validate: errors; run: FAIL, TIMEOUT, WAITING),
2 configuration or usage error (admin: 3 NATS not reachable).`;

const CONFIG = `  --config, -c FILE   the configuration (default ./sagaway.yaml)`;
const HOST = `  --host H            address to listen on (default gateway.host, else 127.0.0.1;
                      0.0.0.0 serves every interface, as a container needs)`;

/** One help page per command. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  admin: `Usage: sagaway admin consumers        --config FILE [--system S] [--runner R] [--deployment D] [--json]
       sagaway admin remove-consumers --config FILE [--system S] [--runner R] [--deployment D]
                                      [--dry-run] [--force] [--json]
       sagaway admin runs             --config FILE [--system S] [--runner R] [--deployment D] [--json]

Operations on a running distributed deployment, through its nats system (default: defaultSystem
when it is a nats system, else the first one). The command listens about a second for the
runners' advertisements before it answers.

  consumers           the durable consumers of the events stream, one per stream, runner and
                      deployment: live (a live runner process consumes it) or retired (none
                      does: its events are read by nobody), with events pending
  remove-consumers    delete the consumers of retired deployments; one with events waiting is
                      kept unless --force (which deletes those events with it)
  runs                the gateway runs in flight, as every live runner process reports them

${CONFIG}
  --system S          the nats system to use
  --runner R, --deployment D
                      only this runner / deployment
  --dry-run           remove-consumers: say what would be removed, remove nothing
  --force             remove-consumers: also remove consumers with events waiting
  --json              JSON on stdout instead of a table

Exit codes: 0 done, 1 a retired consumer was kept or could not be removed, 2 usage or
configuration error, 3 NATS not reachable.`,
  init: `Usage: sagaway init [DIR] [--sagaway SPEC]

Create a project in DIR (default: the current folder, which must not hold a sagaway.yaml or
package.json yet): package.json, sagaway.yaml with public APIs, a handler module, sagas for the
one-shot and the stream form, a test, README.md and .gitignore. Then:
  cd DIR && npm install && npm start      # http://127.0.0.1:8080
  npm test

  --sagaway SPEC      how package.json depends on sagaway: a folder or a .tgz made by
                      \`npm pack\` (written as file:ABSOLUTE-PATH), or an npm version range.
                      Default: this sagaway's own folder.`,
  start: `Usage: sagaway start [--config FILE] [--port N] [--host H]

The gateway and every runner of the file in one process (embedded mode).
${CONFIG.replace('(default ./sagaway.yaml)', '(default ./sagaway.yaml, else the bundled todo example)')}
  --port, -p N        port (default PORT, else gateway.port, else 8080; 0 = any free port)
${HOST}

Warnings (an API nobody can call, a saga no API maps) are logged at start.
Stops cleanly on SIGINT/SIGTERM.`,
  gateway: `Usage: sagaway gateway --config FILE [--port N] [--host H]

The gateway alone; saga requests reach the runners over the file's nats system.
${CONFIG}
  --port, -p N        port (default PORT, else gateway.port, else 8080)
${HOST}`,
  runner: `Usage: sagaway runner --config FILE --runner NAME [--deployment ID] [--port N] [--host H]

One replica of one deployment of runner NAME, reached over the file's nats system.
${CONFIG}
  --runner NAME       the runner to run (required)
  --deployment ID     replaces runners.NAME.deployment
  --port, -p N        port of /healthz, /readyz, /metrics (default: a free port, logged)
${HOST}`,
  validate: `Usage: sagaway validate [--config FILE]

Check the file, every saga and every handler version. Errors and warnings are printed one per
line as FILE:LINE:COL PATH: message. Exit 1 with errors, 0 otherwise (warnings included).
${CONFIG}`,
  run: `Usage: sagaway run [--config FILE] [-X METHOD] [-d JSON] [--user SUB [--roles a,b]]
                  [--clock TIME] [--advance DURATION]... PATH

Run the saga that serves PATH in process, without the gateway, and print one JSON object:
{"outcome","http","response","error"}. Logs go to stderr. \`sagaway run FILE PATH\` is short for
--config FILE. The runner is the one gateway.apis maps PATH to, else the runner whose sagas
serve it (run finds sagas that no API maps; the gateway does not: see \`sagaway routes\`).
${CONFIG}
  --method, -X M      the HTTP method (default GET)
  -d, --data JSON     the body of POST, PUT, PATCH: a JSON object. PATH may hold a query
                      string, the input of GET, DELETE, HEAD: /todos?limit=5
  --user SUB          run as this authenticated user (@.user.sub, $user.sub); default no
                      user (ctx.user is null)
  --roles a,b         that user's roles (@.user.roles); needs --user
  --clock TIME        the waits' clock at the start (ISO 8601 or epoch ms; default now). It
                      stands still: only --advance moves it
  --advance DURATION  when the run parks on a wait step, move the clock by DURATION (72h,
                      90s) and resume what is due; repeat it for each wait the run reaches.
                      A run still waiting after the last is printed WAITING (202, waitingOn)

Wait steps: the runners with one journal into a temporary SQLite file removed at exit (never
the configured journal), so a run of this command never outlives it. Signals cannot be sent
to it: a signal wait ends TIMEOUT when --advance passes its timeout (docs/waits.md).

Exit 0 for SUCCESS and ACK, 1 for FAIL, TIMEOUT and WAITING, 2 for a configuration or usage error.`,
  routes: `Usage: sagaway routes [--config FILE]

Print what the gateway serves: each API entry (path prefix, methods, auth) with its runner and
the sagas it reaches, then the sagas that no API maps (sagaway run finds them, the gateway
answers 404). Warnings are printed too.
${CONFIG}`,
  token: `Usage: sagaway token [--config FILE] --sub SUB [--roles a,b] [--ttl 1h]

Print a development JWT that the configured gateway accepts: signed with
gateway.auth.jwt.secret (HS256/384/512, the first of jwt.algorithms), with its issuer and
audience, the roles at jwt.rolesClaim. Refused when the file has no HS secret (tokens for
public-key setups come from your identity provider).
${CONFIG}
  --sub SUB           the subject (required)
  --roles a,b         roles (default none)
  --ttl DURATION      lifetime, e.g. 15m, 1h, 24h (default 1h)

Use it:  curl -H "authorization: Bearer $(npx sagaway token --sub alice --roles user)" ...`,
};
