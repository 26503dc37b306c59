import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMasker, DEFAULT_MASKER, maskPatternIssue } from './sensitive.js';

const { key, value } = DEFAULT_MASKER;

test('keys: each part, any case, inside longer names', () => {
  const masked = [
    ...[
      'password',
      'pass',
      'pw',
      'pin',
      'otp',
      'secret',
      'token',
      'key',
      'session',
      'ssn',
      'card',
      'cvv',
      'cookie',
      'auth',
    ],
    ...[
      'PASSWORD',
      'Pass',
      'PW',
      'PIN',
      'OTP',
      'Secret',
      'TOKEN',
      'Key',
      'SESSION',
      'SSN',
      'Card',
      'CVV',
      'Cookie',
      'AUTH',
    ],
    ...['userPassword', 'user_pass', 'newPw', 'user-pw', 'userPin', 'pinCode', 'PIN2', 'otpCode', 'otp_secret'],
    ...['clientSecret', 'refresh_token', 'X-Api-Key', 'APIKey', 'publicKeys', 'sessionId', 'JSESSIONID', 'userSSN'],
    ...[
      'cardNumber',
      'credit_card',
      'creditcard',
      'cardnumber',
      'cvv2',
      'cvc',
      'Set-Cookie',
      'authHeader',
      'Authorization',
    ],
    ...['proxyauthorization', 'mypassword', 'passcode', 'passphrase', 'private_key', 'awsAccessKey', 'credentials'],
  ];
  for (const name of masked) assert.equal(key(name), true, name);
  const shown = ['passenger', 'compass', 'shipping', 'mapping', 'footprint', 'monkey', 'keyboard', 'author'];
  for (const name of [...shown, 'classname', 'cardinal', 'spinner', 'name', 'email', 'qty', 'id', '0', '']) {
    assert.equal(key(name), false, name);
  }
});

test('gateway.console.mask: parts anywhere (any case, separators ignored) and /regex/ entries', () => {
  const m = compileMasker(['nickname', 'Date-Of-Birth', '/^x-.*-id$/']);
  for (const name of ['nickname', 'userNickName', 'dateOfBirth', 'date_of_birth', 'X-Tenant-Id', 'password']) {
    assert.equal(m.key(name), true, name);
  }
  for (const name of ['name', 'birthday', 'x-tenant', 'tenant-id']) assert.equal(m.key(name), false, name);
  assert.equal(DEFAULT_MASKER.key('nickname'), false, 'one configuration does not change another');
  assert.equal(maskPatternIssue('nickname'), undefined);
  assert.equal(maskPatternIssue('/a(b/')?.startsWith('not a regular expression'), true);
  assert.equal(maskPatternIssue('--'), 'an entry needs a letter or a digit');
});

test('values: a JWT or a Luhn-valid card number is masked whatever its key', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  for (const v of [
    jwt,
    `Bearer ${jwt}`,
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.',
    '4111111111111111',
    '4111 1111 1111 1111',
    '5555-5555-5555-4444',
    '378282246310005',
    'pay with 4111 1111 1111 1111 today',
    4111111111111111,
    6011111111111117,
  ]) {
    assert.equal(value(v), true, String(v));
  }
  for (const v of [
    '4111111111111112', // Luhn-invalid
    '411111111111', // 12 digits
    '41111111111111111111', // 20 digits: a long id, not a card
    '1732700000000', // epoch milliseconds (13 digits, start with 1)
    1732700000004,
    'eyJhbGciOiJIUzI1NiJ9 is only a header',
    'a plain sentence',
    12,
    null,
    { n: '4111111111111111' }, // objects are walked, their strings checked one by one
  ]) {
    assert.equal(value(v), false, JSON.stringify(v));
  }
  assert.equal(value(`${'x'.repeat(100)}4111111111111111`, 50), false, 'past the shown part: not searched');
});

test('keys: the answer is cached, long keys are decided without being kept', () => {
  const m = compileMasker();
  const long = 'a'.repeat(10_000) + 'Pin';
  assert.equal(m.key(long), true);
  assert.equal(m.key('userPin'), true);
  assert.equal(m.key('userPin'), true, 'from the cache');
  // 5000 distinct keys: the cache starts again instead of growing without bound.
  for (let i = 0; i < 5000; i++) assert.equal(m.key(`field${i}`), false);
});
