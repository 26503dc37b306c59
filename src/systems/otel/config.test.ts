import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { carrierOf } from '../../core/otel.js';
import { resolveTracing } from './config.js';

describe('tracing settings: observability.tracing and the OTEL_* variables', () => {
  test('off without settings or variables', () => {
    assert.equal(resolveTracing(undefined, {}), undefined);
    assert.equal(resolveTracing({}, {}), undefined);
  });

  test('on by the file, with its endpoint as a base URL', () => {
    const r = resolveTracing(
      {
        enabled: true,
        endpoint: 'http://collector:4318/',
        serviceName: 'shop',
        sampleRatio: 0.25,
        headers: { 'X-Key': 'k' },
      },
      { OTEL_SERVICE_NAME: 'ignored', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' },
    );
    assert.deepEqual(
      { ...r, headers: { ...r?.headers } },
      {
        url: 'http://collector:4318/v1/traces',
        serviceName: 'shop',
        sampleRatio: 0.25,
        headers: { 'x-key': 'k' },
      },
    );
  });

  test('the file wins: enabled false stays off whatever the variables say', () => {
    assert.equal(resolveTracing({ enabled: false }, { OTEL_TRACES_EXPORTER: 'otlp' }), undefined);
  });

  test('on by the variables: endpoint, traces endpoint, service, ratio, headers', () => {
    const r = resolveTracing(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://tempo:4318',
      OTEL_SERVICE_NAME: 'orders',
      OTEL_TRACES_SAMPLER_ARG: '0.5',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-scope-orgid=t1,__proto__=x,broken',
    });
    assert.equal(r?.url, 'http://tempo:4318/v1/traces');
    assert.equal(r?.serviceName, 'orders');
    assert.equal(r?.sampleRatio, 0.5);
    assert.deepEqual({ ...r?.headers }, { authorization: 'Bearer abc', 'x-scope-orgid': 't1' });
    assert.equal(
      resolveTracing(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' })?.url,
      'http://c:4318/custom',
    );
    assert.equal(resolveTracing(undefined, { OTEL_TRACES_EXPORTER: 'otlp' })?.url, 'http://localhost:4318/v1/traces');
  });

  test('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none switch it off; a bad ratio is ignored', () => {
    assert.equal(resolveTracing(undefined, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(
      resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' }),
      undefined,
    );
    assert.equal(
      resolveTracing(undefined, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER_ARG: '7' })?.sampleRatio,
      1,
    );
  });
});

describe('W3C trace context as received', () => {
  test('a well-formed traceparent, a bounded tracestate', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    assert.deepEqual(carrierOf(tp, 'a=b'), { traceparent: tp, tracestate: 'a=b' });
    assert.deepEqual(carrierOf(tp, 'x'.repeat(513)), { traceparent: tp });
    assert.deepEqual(carrierOf(tp, 'a=b\r\nx-evil: 1'), { traceparent: tp }, 'no control characters');
  });

  test('anything else is dropped', () => {
    for (const bad of [
      undefined,
      42,
      '',
      'garbage',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra',
    ])
      assert.equal(carrierOf(bad), undefined, String(bad));
  });
});
