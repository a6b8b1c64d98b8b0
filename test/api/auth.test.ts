/** Token checks: the constant-time compare and the read/write rules. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorHeaderIdentity, authenticator, constantTimeEqual, tokenIdentity } from '../../src/api/auth.js';
import { MeshsnapError } from '../../src/errors.js';

test('constantTimeEqual: equal strings only, lengths folded in, UTF-8 aware', () => {
  assert.equal(constantTimeEqual('s3cret', 's3cret'), true);
  assert.equal(constantTimeEqual('s3cret', 's3cres'), false);
  assert.equal(
    constantTimeEqual('s3cret', 's3cret\0'),
    false,
    'a trailing NUL must not compare equal (length is folded in)',
  );
  assert.equal(constantTimeEqual('', 'x'), false);
  assert.equal(constantTimeEqual('', ''), true);
  assert.equal(constantTimeEqual('é', 'e\u0301'), false);
  assert.equal(constantTimeEqual('ключ', 'ключ'), true);
});

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof MeshsnapError);
    return e.code;
  }
  return 'ok';
};

test('open reads, write token for writes; wrong or malformed tokens are refused', () => {
  const a = authenticator({ writeToken: 'w' });
  assert.equal(a.openReads, true);
  assert.deepEqual(a.check(undefined, 'read'), { access: 'none', token: null });
  assert.equal(
    code(() => a.check(undefined, 'write')),
    'unauthorized',
  );
  assert.equal(
    code(() => a.check('Bearer nope', 'write')),
    'unauthorized',
  );
  assert.equal(
    code(() => a.check('Bearer nope', 'read')),
    'unauthorized',
  );
  assert.equal(
    code(() => a.check('Basic dzp3', 'write')),
    'unauthorized',
  );
  assert.deepEqual(a.check('Bearer w', 'write'), { access: 'write', token: 'api' });
});

test('closed reads: read token reads but may not write (403); named write tokens name the caller', () => {
  const a = authenticator({
    writeToken: [
      { name: 'ci', token: 'w1' },
      { name: 'ops', token: 'w2' },
    ],
    readToken: 'r',
  });
  assert.equal(a.openReads, false);
  assert.equal(
    code(() => a.check(undefined, 'read')),
    'unauthorized',
  );
  assert.deepEqual(a.check('Bearer r', 'read'), { access: 'read', token: 'reader' });
  assert.equal(
    code(() => a.check('Bearer r', 'write')),
    'forbidden',
  );
  assert.deepEqual(a.check('bearer w2', 'read'), { access: 'write', token: 'ops' });
  assert.deepEqual(a.check('Bearer w1', 'write'), { access: 'write', token: 'ci' });
  assert.throws(() => authenticator({ writeToken: '' }), /non-empty write token/);
});

test('identity: token name by default; the actor header only when trusted, and validated', async () => {
  const caller = { access: 'write' as const, token: 'ci' };
  const headers = (h: Record<string, string>) => (n: string) => h[n];
  assert.equal(await tokenIdentity(caller, headers({ 'X-Meshsnap-Actor': 'mallory' })), 'ci');
  assert.equal(
    await actorHeaderIdentity(caller, headers({ 'X-Meshsnap-Actor': 'alice@example.com' })),
    'alice@example.com (via ci)',
  );
  assert.equal(await actorHeaderIdentity(caller, headers({})), 'ci');
  await assert.rejects(
    async () => actorHeaderIdentity(caller, headers({ 'X-Meshsnap-Actor': 'a\nb' })),
    /X-Meshsnap-Actor/,
  );
});
