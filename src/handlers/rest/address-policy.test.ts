import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertUrlAllowed, classifyAddress, refusedCategory, SsrfBlockedError } from './address-policy.js';
import { embeddedIPv4, parseIPv6, unbracket } from './ip-address.js';

const strict = { allowPrivate: false };
const open = { allowPrivate: true };

/** The category the policy gives the host of `url` after WHATWG parsing, or 'public'. */
function hostVerdict(url: string): string {
  try {
    assertUrlAllowed(new URL(url), strict);
    return 'allowed';
  } catch (err) {
    assert.ok(err instanceof SsrfBlockedError);
    assert.equal(err.code, 'SSRF_BLOCKED');
    assert.equal(err.http, 403);
    return err.reason;
  }
}

describe('ip-address helpers', () => {
  test('parseIPv6 expands every form, including a dotted tail', () => {
    assert.deepEqual(parseIPv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(parseIPv6('[::ffff:127.0.0.1]'), [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    assert.deepEqual(parseIPv6('::ffff:7f00:1'), [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    assert.deepEqual(parseIPv6('2001:db8::8:800:200c:417a'), [0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]);
    assert.deepEqual(parseIPv6('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    assert.equal(parseIPv6('127.0.0.1'), undefined);
    assert.equal(parseIPv6('example.com'), undefined);
  });

  test('embeddedIPv4 finds mapped, compatible, translated, NAT64 and 6to4 forms', () => {
    const e = (ip: string): string | undefined => embeddedIPv4(parseIPv6(ip) ?? []);
    assert.equal(e('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(e('::7f00:1'), '127.0.0.1');
    assert.equal(e('::ffff:0:a9fe:a9fe'), '169.254.169.254');
    assert.equal(e('64:ff9b::c0a8:101'), '192.168.1.1');
    assert.equal(e('2002:7f00:1::'), '127.0.0.1');
    assert.equal(e('::1'), undefined);
    assert.equal(e('::'), undefined);
    assert.equal(e('2606:4700::1111'), undefined);
  });

  test('unbracket strips brackets and zones only', () => {
    assert.equal(unbracket('[::1]'), '::1');
    assert.equal(unbracket('fe80::1%eth0'), 'fe80::1');
    assert.equal(unbracket('example.com'), 'example.com');
  });
});

describe('classifyAddress', () => {
  const cases: [string, string | undefined][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['2002:7f00:1::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::1', 'private'],
    ['fc00::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['example.com', 'invalid'],
    ['', 'invalid'],
    // public unicast
    ['8.8.8.8', undefined],
    ['1.1.1.1', undefined],
    ['100.63.255.255', undefined],
    ['100.128.0.0', undefined],
    ['172.15.255.255', undefined],
    ['172.32.0.0', undefined],
    ['169.253.255.255', undefined],
    ['2606:4700:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
  ];
  for (const [ip, expected] of cases) {
    test(`${ip || '(empty)'} is ${expected ?? 'public'}`, () => assert.equal(classifyAddress(ip), expected));
  }
});

describe('refusedCategory', () => {
  test('the default policy refuses every non-public address', () => {
    assert.equal(refusedCategory('127.0.0.1', strict), 'loopback');
    assert.equal(refusedCategory('10.0.0.1', strict), 'private');
    assert.equal(refusedCategory('8.8.8.8', strict), undefined);
  });

  test('allowPrivate opens private ranges but never metadata endpoints or non-addresses', () => {
    assert.equal(refusedCategory('127.0.0.1', open), undefined);
    assert.equal(refusedCategory('10.0.0.1', open), undefined);
    assert.equal(refusedCategory('fd00::1', open), undefined);
    assert.equal(refusedCategory('169.254.169.254', open), 'metadata');
    assert.equal(refusedCategory('::ffff:a9fe:a9fe', open), 'metadata');
    assert.equal(refusedCategory('not-an-ip', open), 'invalid');
  });
});

describe('assertUrlAllowed (WHATWG parsing first)', () => {
  const blocked: [string, string][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[0:0:0:0:0:ffff:7f00:0001]:8080/', 'loopback'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://10.0.0.1/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['http://0xa9fea9fe/', 'metadata'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://[fd00::1]/', 'private'],
    ['http://[fe80::1]/', 'link-local'],
    ['file:///etc/passwd', 'scheme'],
    ['ftp://example.com/', 'scheme'],
    ['gopher://example.com:70/', 'scheme'],
    ['data:text/plain,hi', 'scheme'],
    ['http://user:pw@example.com/', 'credentials'],
  ];
  for (const [url, reason] of blocked) {
    test(`${url} is refused (${reason})`, () => assert.equal(hostVerdict(url), reason));
  }

  test('names are left to the connect-time check; public literals pass', () => {
    assert.equal(hostVerdict('http://localhost/'), 'allowed'); // refused later, on 127.0.0.1
    assert.equal(hostVerdict('https://api.example.com/x'), 'allowed');
    assert.equal(hostVerdict('http://8.8.8.8/'), 'allowed');
  });

  test('allowPrivate still refuses other schemes', () => {
    assert.throws(() => assertUrlAllowed(new URL('file:///etc/passwd'), open), SsrfBlockedError);
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://127.0.0.1:1/'), open));
  });

  test('the error message never names the address', () => {
    try {
      assertUrlAllowed(new URL('http://10.9.8.7/'), strict);
      assert.fail('not refused');
    } catch (err) {
      assert.ok(err instanceof SsrfBlockedError);
      assert.doesNotMatch(err.message, /10\.9\.8\.7/);
    }
  });
});
