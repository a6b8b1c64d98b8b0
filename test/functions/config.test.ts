/** The functions' pure pieces: env → auth config, S3 event records → channels, folder → input texts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inputTexts, InputBundleError, isInputKey } from '../../functions/aws/input-files.js';
import { channelsOf, decodeEventKey } from '../../functions/aws/s3-event.js';
import { authFromEnv, ConfigError, identityFromEnv } from '../../functions/shared/env.js';
import { actorHeaderIdentity, tokenIdentity } from '../../src/api/auth.js';
import { s3Event } from './lambda-events.js';

test('auth from env: a write token is required, named tokens and read tokens are read', () => {
  assert.throws(() => authFromEnv({}), ConfigError);
  assert.throws(() => authFromEnv({ MESHSNAP_WRITE_TOKEN: '' }), ConfigError, 'an empty secret is no secret');
  assert.deepEqual(authFromEnv({ MESHSNAP_WRITE_TOKEN: 't' }), { writeToken: [{ name: 'api', token: 't' }] });
  assert.deepEqual(
    authFromEnv({ MESHSNAP_API_TOKEN: 't' }).writeToken,
    [{ name: 'api', token: 't' }],
    "meshsnap serve's name works too",
  );
  const multi = authFromEnv({
    MESHSNAP_WRITE_TOKENS: '{"alice":"a1","ci":"c1"}',
    MESHSNAP_READ_TOKEN: 'r',
    MESHSNAP_OPEN_READS: 'false',
  });
  assert.deepEqual(multi, {
    writeToken: [
      { name: 'alice', token: 'a1' },
      { name: 'ci', token: 'c1' },
    ],
    readToken: 'r',
    openReads: false,
  });
  assert.throws(
    () => authFromEnv({ MESHSNAP_WRITE_TOKENS: 'secret-not-json' }),
    (e: Error) => e instanceof ConfigError && !e.message.includes('secret-not-json'),
    'the message never echoes a secret',
  );
  assert.throws(() => authFromEnv({ MESHSNAP_WRITE_TOKEN: 't', MESHSNAP_OPEN_READS: 'maybe' }), ConfigError);
  assert.equal(identityFromEnv({}), tokenIdentity);
  assert.equal(identityFromEnv({ MESHSNAP_TRUST_ACTOR_HEADER: 'true' }), actorHeaderIdentity);
});

test('S3 event keys are decoded and grouped by channel', () => {
  assert.equal(decodeEventKey('inputs/main/my+file%2Bv2.yaml'), 'inputs/main/my file+v2.yaml');
  const event = s3Event('b', 'inputs/main/a.yaml');
  event.Records.push({
    ...structuredClone(event.Records[0]),
    s3: { ...event.Records[0].s3, object: { key: 'inputs/main/b.yaml' } },
  });
  event.Records.push({
    ...structuredClone(event.Records[0]),
    s3: { ...event.Records[0].s3, object: { key: 'inputs/Bad..name/x.yaml' } },
  });
  event.Records.push({
    ...structuredClone(event.Records[0]),
    s3: { ...event.Records[0].s3, object: { key: 'inputs/main/' } },
  });
  const { touched, skipped } = channelsOf(event, 'inputs/');
  assert.deepEqual(
    touched.map((t) => [t.channel, t.key, t.principal]),
    [['main', 'inputs/main/b.yaml', 'AWS:AIDAEXAMPLEWATCHER']],
    'one compile per channel, named after its newest record',
  );
  assert.equal(skipped.length, 2);
});

test('a folder becomes input texts; JSON bundles are expanded in place', () => {
  const texts = inputTexts([
    { name: 'z.yaml', text: 'kind: Service' },
    {
      name: 'bundle.json',
      text: JSON.stringify({
        files: [{ file: 'vs.yaml', text: 'kind: VirtualService' }, { text: 'kind: DestinationRule' }],
      }),
    },
    { name: 'list.json', text: '{"kind":"List","items":[]}' },
    { name: 'broken.json', text: '{' },
  ]);
  assert.deepEqual(
    texts.map((t) => t.file),
    ['broken.json', 'bundle.json#vs.yaml', 'bundle.json#files[1]', 'list.json', 'z.yaml'],
  );
  assert.throws(() => inputTexts([{ name: 'b.json', text: '{"files": 3}' }]), InputBundleError);
  assert.ok(isInputKey('a/b.YAML') && isInputKey('x.yml') && isInputKey('x.json'));
  assert.ok(!isInputKey('README.md') && !isInputKey('inputs/main/'));
});
