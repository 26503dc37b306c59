import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { OWN_HTML_CSP } from '../../src/gateway/formats/index.js';
import { startTestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 8: a saga that echoes its input into `html` would be reflected XSS. Its page is
 * served as the saga wrote it, but with a strict Content-Security-Policy (no script of any
 * kind, nothing loaded from elsewhere, no form target, never framed) and `nosniff`; only the
 * configuration (`gateway.apis[].csp`) can loosen it, never the response or the request.
 */

const CONFIG = `
gateway:
  apis:
    - { path: /, runner: web, public: true }
    - { path: /charts, runner: web, public: true, csp: "default-src 'none'; script-src https://cdn.example; img-src data:" }
runners:
  web:
    sagas:
      - id: echo
        path: /echo
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - { id: page, type: transform, expression: '{ "html": "<h1>Hello " & parameters.name & "</h1>", "csp": parameters.csp }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: chart
        path: /charts/one
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - { id: page, type: transform, expression: '{ "html": "<canvas></canvas>" }', links: [{ to: done }] }
          - { id: done, type: success }
`;

const XSS = '<script>alert(document.cookie)</script><img src=x onerror=alert(1)>';

test("a saga's own html carries a strict CSP and nosniff; the caller cannot loosen it; the API entry can", async () => {
  const h = await startTestHost(CONFIG);
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  try {
    const url = `${base}/api/request/echo.html?name=${encodeURIComponent(XSS)}&csp=${encodeURIComponent("script-src 'unsafe-inline'")}`;
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    const body = await res.text();
    assert.ok(body.includes(XSS), 'the page is the saga own, as written (no data lost)');
    const csp = res.headers.get('content-security-policy');
    assert.equal(csp, OWN_HTML_CSP, 'a csp field in the response (from the request) changes nothing');
    for (const directive of ["default-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"]) {
      assert.ok(csp!.includes(directive), directive);
    }
    assert.ok(!/script-src|unsafe-eval/.test(csp!), 'no script source at all');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');

    // the same through Accept, and generated pages keep their own strict policy
    const byAccept = await fetch(`${base}/api/request/echo?name=x`, { headers: { accept: 'text/html' } });
    assert.equal(byAccept.headers.get('content-security-policy'), OWN_HTML_CSP);
    const generated = await fetch(`${base}/api/request/charts/one.json`);
    assert.equal(generated.headers.get('x-content-type-options'), 'nosniff');

    // an API entry's `csp` replaces the policy for its paths, and only there
    const chart = await fetch(`${base}/api/request/charts/one.html`);
    assert.equal(
      chart.headers.get('content-security-policy'),
      "default-src 'none'; script-src https://cdn.example; img-src data:",
    );
    assert.equal(chart.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(await chart.text(), '<canvas></canvas>');

    // nosniff on the other answers of the gateway too: problems and operations
    for (const path of ['/api/request/nothing-here', '/healthz']) {
      const r = await fetch(base + path);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    }
  } finally {
    await gw.close();
    await h.close();
  }
});
