// Node-RED 4.1 settings of the suite: editor and admin API off, every log off, the shared items
// Map in the global context (function nodes read it with global.get('items')).
//   node bench/peers/node_modules/node-red/red.js --settings bench/peers/node-red/settings.cjs \
//     --userDir <tmp> --port N bench/peers/node-red/<workload>.json
/* global require, module */
'use strict';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED loads its settings with require()
const { items } = require('../../lib/items.cjs');

module.exports = {
  uiHost: '127.0.0.1',
  httpAdminRoot: false,
  httpNodeRoot: '/',
  disableEditor: true,
  credentialSecret: false,
  logging: { console: { level: 'off', metrics: false, audit: false } },
  telemetry: { enabled: false },
  externalModules: { autoInstall: false, palette: { allowInstall: false }, modules: { allowInstall: false } },
  functionExternalModules: false,
  functionGlobalContext: { items },
};
