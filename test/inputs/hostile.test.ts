/**
 * Hostile inputs through the API and the stores: secrets never reach a stored byte or an answer,
 * names of Object.prototype members are ordinary names, a huge file of tiny documents compiles,
 * a corrupt stored object fails verify, `<channel>.candidates` is reserved.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { selectVersion } from '../../src/history/select.js';
import { verifyVersion } from '../../src/history/verify.js';
import { storedObject } from '../../src/snapshot/stored-inputs/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { ObjectCache } from '../../src/watch/object-cache.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-hostile-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Values that must never be stored or served. */
const SECRETS = [
  'c3VwZXItc2VjcmV0LXBhc3N3b3Jk',
  'plain-string-data-s3cret',
  'configmap-api-key-77',
  'pod-env-password-42',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
  'annotation-token-99',
];

const HOSTILE = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: default}
type: Opaque
data: {password: c3VwZXItc2VjcmV0LXBhc3N3b3Jk}
stringData: {token: plain-string-data-s3cret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: default}
data: {apiKey: configmap-api-key-77}
---
apiVersion: v1
kind: Pod
metadata:
  name: ratings-1
  namespace: default
  labels: {app: ratings}
  annotations: {secret-ish: annotation-token-99}
spec:
  nodeName: node-1
  containers:
  - name: app
    image: ratings
    env:
    - {name: DB_PASSWORD, value: pod-env-password-42}
    ports: [{containerPort: 9080}]
status:
  phase: Running
  podIP: 10.1.0.1
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ratings, namespace: default}
spec:
  host: ratings
  trafficPolicy:
    tls:
      mode: MUTUAL
      clientCertificate: /etc/certs/cert.pem
      privateKey: |
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7
        -----END PRIVATE KEY-----
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ratings, namespace: default}
spec:
  hosts: [ratings]
  http:
  - route: [{destination: {host: ratings}}]
    unknownField: {secret: annotation-token-99}
`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function assertNoSecret(text: string, where: string): void {
  for (const s of SECRETS) assert.ok(!text.includes(s), `${where} holds ${s}`);
  assert.ok(!text.includes('BEGIN PRIVATE KEY'), `${where} holds key material`);
}

const WRITE = 'w';
const auth = { authorization: `Bearer ${WRITE}`, 'content-type': 'application/json' };

test('secrets, ConfigMap data, Pod env, pasted keys and unknown fields reach no stored byte and no API answer', async () => {
  const dir = join(tmp, 'secrets');
  const app = createApp({
    store: new LocalStore(dir),
    auth: { writeToken: WRITE },
    compile: { hasher: nodeSha256Hex },
  });
  const res = await app.request('/api/v1/channels/main/compile', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ files: [{ file: 'hostile.yaml', text: HOSTILE }] }),
  });
  const compiled = await res.text();
  assert.equal(res.status, 201, compiled);
  assertNoSecret(compiled, 'the compile answer');
  assert.match(compiled, /inline key or certificate material/);

  for (const path of [
    '/api/v1/channels/main/snapshots/1/inputs',
    '/api/v1/channels/main/snapshots/1/diagnostics',
    '/api/v1/channels/main/snapshots/1',
    '/api/v1/audit',
  ]) {
    const r = await app.request(path);
    assert.equal(r.status, 200, path);
    assertNoSecret(await r.text(), path);
  }
  const inputs = (await (await app.request('/api/v1/channels/main/snapshots/1/inputs')).json()) as {
    objects: Record<string, { object: Record<string, unknown> }>;
  };
  assert.deepEqual(Object.keys(inputs.objects).sort(), [
    'DestinationRule/default/ratings',
    'Pod/default/ratings-1',
    'VirtualService/default/ratings',
  ]);
  const pod = inputs.objects['Pod/default/ratings-1']!.object as {
    spec: { containers: unknown[]; nodeName: string };
    status: { podIP: string };
  };
  assert.deepEqual(
    pod.spec.containers,
    [{ ports: [{ containerPort: 9080 }] }],
    'a Pod keeps only what the compiler reads',
  );
  assert.equal(pod.status.podIP, '10.1.0.1');
  const dr = inputs.objects['DestinationRule/default/ratings']!.object;
  assert.equal(dr.spec, undefined, 'a rejected object is stored redacted');

  let files = 0;
  for (const f of filesUnder(dir)) {
    assertNoSecret(readFileSync(f, 'latin1'), f);
    files++;
  }
  assert.ok(files > 5);

  // Stored inputs compile again to the same inputs digest (the projection of a projection is itself).
  const store = new LocalStore(dir);
  const v = await verifyVersion(store, await selectVersion(store, 'main', '1'), nodeSha256Hex);
  assert.equal(v.ok, true, v.reasons.join('; '));
});

test('the watcher keeps the same projection of informer objects; kinds it does not compile are not cached', () => {
  const cache = new ObjectCache(nodeSha256Hex);
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default', resourceVersion: '1' },
    data: { k: SECRETS[0] },
  };
  assert.equal(cache.upsert(secret), undefined);
  assert.equal(cache.size, 0);
  const pod = compileTexts([{ file: 'h.yaml', text: HOSTILE }], { hasher: nodeSha256Hex }).stored;
  const raw = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'c', env: [{ name: 'X', value: SECRETS[3] }] }] },
    status: { podIP: '10.0.0.9' },
  };
  assert.ok(cache.upsert(raw));
  assertNoSecret(new TextDecoder().decode(storedObject(raw, nodeSha256Hex)!.bytes), 'a cached Pod');
  for (const bytes of pod.objects.values()) assertNoSecret(new TextDecoder().decode(bytes), 'a stored object');
});

test('names of Object.prototype members are ordinary tag names; a malformed audit record is skipped, not fatal', async () => {
  const dir = join(tmp, 'proto');
  const store = new LocalStore(dir);
  const app = createApp({ store, auth: { writeToken: WRITE }, compile: { hasher: nodeSha256Hex } });
  const vs =
    'apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a, namespace: default}\nspec: {hosts: [a], http: [{route: [{destination: {host: a}}]}]}\n';
  for (const ch of ['toString', 'constructor']) {
    const r = await app.request(`/api/v1/channels/${ch}/compile`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ files: [{ text: vs }] }),
    });
    assert.equal(r.status, 201, await r.text());
  }
  for (const name of ['toString', 'hasOwnProperty', 'constructor']) {
    const missing = await app.request(`/api/v1/channels/toString/snapshots/${name}`);
    assert.equal(missing.status, 404, `${name}: ${await missing.text()}`);
    await assert.rejects(selectVersion(store, 'toString', name), /no tag/);
  }
  const tagged = await app.request('/api/v1/channels/toString/tags', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'hasOwnProperty', version: 1 }),
  });
  assert.equal(tagged.status, 201, await tagged.text());
  assert.equal((await selectVersion(store, 'toString', 'hasOwnProperty')).version, 1);

  writeFileSync(
    join(dir, 'audit', readdirSync(join(dir, 'audit'))[0]!, 'zz-broken.jsonl'),
    '{"not":"a record"}\nnot json\n',
  );
  const audit = await app.request('/api/v1/audit');
  const body = (await audit.json()) as { entries: { kind: string; channel: string }[] };
  assert.equal(audit.status, 200);
  assert.ok(body.entries.some((e) => e.kind === 'tag' && e.channel === 'toString'));
});

test('a label key, selector key or namespace named after an Object.prototype member is data', () => {
  const text = `apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec:
  selector: {constructor: x, toString: y, __proto__: z}
  ports: [{port: 80, name: http}]
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, labels: {constructor: x, toString: y, __proto__: z}}
spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
status: {phase: Running, podIP: 10.0.0.1, conditions: [{type: Ready, status: "True"}]}
`;
  const r = compileTexts([{ file: 'p.yaml', text }], { hasher: nodeSha256Hex });
  assert.deepEqual(
    r.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.ok(r.snapshot.counts.endpoints > 0 || r.snapshot.counts.clusters > 0);
  const pod = [...r.stored.objects.values()]
    .map(
      (b) => JSON.parse(new TextDecoder().decode(b)) as { kind: string; metadata: { labels?: Record<string, string> } },
    )
    .find((o) => o.kind === 'Pod');
  assert.equal(Object.hasOwn(pod?.metadata.labels ?? {}, '__proto__'), true);
});

test('more than 120k tiny documents compile without overflowing the stack', () => {
  const doc = '---\n{}\n';
  const text = doc.repeat(130_000);
  const r = compileTexts([{ file: 'many.yaml', text }], { hasher: nodeSha256Hex });
  assert.ok(r.diagnostics.length > 0);
});

test('verify re-reads every stored object: a corrupt one fails it and is named', async () => {
  const dir = join(tmp, 'corrupt');
  const store = new LocalStore(dir);
  const app = createApp({ store, auth: { writeToken: WRITE }, compile: { hasher: nodeSha256Hex } });
  const r = await app.request('/api/v1/channels/main/compile', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ files: [{ file: 'h.yaml', text: HOSTILE }] }),
  });
  assert.equal(r.status, 201);
  const record = await selectVersion(store, 'main', '1');
  assert.equal((await verifyVersion(store, record, nodeSha256Hex)).ok, true);
  const objects = filesUnder(join(dir, 'objects'));
  const victim = objects.sort()[0]!;
  writeFileSync(victim, 'corrupt');
  const v = await verifyVersion(store, record, nodeSha256Hex);
  assert.equal(v.ok, false);
  const name = victim.split('/').pop()!.replace(/\..*$/, '');
  assert.ok(
    v.reasons.some((x) => x.includes(name) && /corrupt/.test(x)),
    v.reasons.join('\n'),
  );
});

test('<channel>.candidates is reserved: the API answers 400', async () => {
  const app = createApp({
    store: new LocalStore(join(tmp, 'reserved')),
    auth: { writeToken: WRITE },
    compile: { hasher: nodeSha256Hex },
  });
  const r = await app.request('/api/v1/channels/main.candidates/compile', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ files: [{ text: 'a: 1' }] }),
  });
  assert.equal(r.status, 400);
  assert.match(await r.text(), /reserved/);
});

const vsWith = (spec: string): string =>
  `apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: default}\nspec: ${spec}\n`;
const errorsOf = (text: string) =>
  compileTexts([{ file: 'x.yaml', text }], { hasher: nodeSha256Hex }).diagnostics.filter((d) => d.severity === 'error');

test('regexes follow RE2 as Envoy runs it: a{2000}, \\Z and an over-large program are invalid-field errors naming the field', () => {
  for (const regex of ['a{2000}', '\\\\Z', '(abcdefghij|klmnopqrst|uvwxyzabcd){1000}']) {
    const errors = errorsOf(
      vsWith(`{hosts: [a], http: [{match: [{uri: {regex: "${regex}"}}], route: [{destination: {host: a}}]}]}`),
    );
    assert.equal(errors.length, 1, `${regex}: ${JSON.stringify(errors)}`);
    assert.equal(errors[0]?.code, 'invalid-field');
    assert.equal(errors[0]?.field, 'spec.http[0].match[0].uri.regex');
  }
  const cors = errorsOf(
    vsWith(
      '{hosts: [a], http: [{corsPolicy: {allowOrigins: [{regex: "a{2000}"}]}, route: [{destination: {host: a}}]}]}',
    ),
  );
  assert.equal(cors[0]?.field, 'spec.http[0].corsPolicy.allowOrigins[0].regex');
  assert.deepEqual(
    errorsOf(
      vsWith(
        '{hosts: [a], http: [{match: [{uri: {regex: "^/api/v[0-9]+/users/[a-z0-9-]+$"}}], route: [{destination: {host: a}}]}]}',
      ),
    ),
    [],
  );
  // Over Envoy's default of 100 but within the 32768 Istio's bootstrap sets: accepted, as istiod's proxies do.
  assert.deepEqual(
    errorsOf(
      vsWith('{hosts: [a], http: [{match: [{uri: {regex: "/[a-z]{1000}"}}], route: [{destination: {host: a}}]}]}'),
    ),
    [],
  );
});

test('bounds: a VirtualService with too many routes and an object over 1.5 MiB are refused fast with a too-large diagnostic', () => {
  const routes = Array.from(
    { length: 6_000 },
    (_, i) => `{match: [{uri: {prefix: "/${i}"}}], route: [{destination: {host: a}}]}`,
  ).join(',');
  const many = errorsOf(vsWith(`{hosts: [a], http: [${routes}]}`));
  assert.equal(many.length, 1);
  assert.deepEqual(
    { code: many[0]?.code, kind: many[0]?.kind, name: many[0]?.name, field: many[0]?.field },
    { code: 'too-large', kind: 'VirtualService', name: 'r', field: 'spec.http' },
  );

  const huge = Array.from(
    { length: 40_000 },
    (_, i) =>
      `{match: [{uri: {prefix: "/a-rather-long-prefix-to-fill-the-object/${i}"}}], route: [{destination: {host: a}}]}`,
  ).join(',');
  const big = errorsOf(vsWith(`{hosts: [a], http: [${huge}]}`));
  assert.equal(big.length, 1);
  assert.deepEqual(
    { code: big[0]?.code, kind: big[0]?.kind, name: big[0]?.name, file: big[0]?.file, index: big[0]?.index },
    { code: 'too-large', kind: 'VirtualService', name: 'r', file: 'x.yaml', index: 0 },
  );
  const json = errorsOf(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { x: 'x'.repeat(1_600_000) },
    }),
  );
  assert.equal(json[0]?.code, 'too-large');
});

test('a diagnostic never quotes key material pasted into any field', () => {
  const text = `apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d, namespace: default}\nspec:\n  host: a\n  trafficPolicy: {tls: {mode: "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"}}\n`;
  const errors = errorsOf(text);
  assert.equal(errors[0]?.field, 'spec.trafficPolicy.tls.mode');
  assertNoSecret(JSON.stringify(errors), 'the diagnostics');
});

test('a diagnostic about a rejected object does not quote its values back in stored inputs', () => {
  const text = vsWith('{hosts: [a], http: [{route: [{destination: {host: a}}], timeout: "secret-looking-value-123"}]}');
  const r = compileTexts([{ file: 'x.yaml', text }], { hasher: nodeSha256Hex });
  for (const bytes of r.stored.objects.values())
    assert.ok(!new TextDecoder().decode(bytes).includes('secret-looking-value-123'));
});
