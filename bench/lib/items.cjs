// The data every peer reads: 1,000 items in a Map, even ids active. CommonJS so that Node-RED's
// settings file (CommonJS) and the ES modules of sagaway's handler and the other peers share it;
// every server does the same work per request.
/* global exports */
'use strict';
const items = new Map();
for (let i = 0; i < 1000; i++) items.set(String(i), { id: String(i), name: `item ${i}`, active: i % 2 === 0 });
exports.items = items;
