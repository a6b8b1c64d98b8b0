/**
 * `meshsnap watch --write-status` against the fake API server (its status subresources behave as
 * kube-apiserver's: PUT .../status changes only the status, 409 on a stale resourceVersion, the
 * CRDs' status defaults). The statuses come from a compiler that adds `gateway-api-status`
 * diagnostics chosen by the test (the contract of src/model/object-status.ts), so the writer is
 * checked on its own: written once, nothing on an unchanged round, times kept or moved, other
 * controllers' route parents kept, conflicts re-read and retried, our stale parent entry removed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortDiagnostics, type Diagnostic } from '../../src/model/diagnostics.js';
import {
  GATEWAY_CONTROLLER_NAME,
  STATUS_DIAGNOSTIC_CODE,
  type ObjectStatus,
  type StatusCondition,
} from '../../src/model/object-status.js';
import { pin, unpin } from '../../src/history/pin.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import {
  LocalCompiler,
  type CompileRequest,
  type CompileResult,
  type SnapshotCompiler,
} from '../../src/watch/compiler.js';
import { DEFAULT_RESOURCES, GATEWAY_API_RESOURCES, until, type KubeObject } from '../helpers/fake-apiserver.js';
import { baseMesh, service, startHarness, type Harness } from './watch-harness.js';

const GROUP = 'gateway.networking.k8s.io';
const OTHER = 'example.net/another-controller';

/** A full local compile whose Gateway API statuses are the test's. */
class StatusCompiler implements SnapshotCompiler {
  statuses: Diagnostic[] = [];
  private readonly inner = new LocalCompiler(nodeSha256Hex);

  async compile(req: CompileRequest): Promise<CompileResult> {
    const r = await this.inner.compile(req);
    const own = r.diagnostics.filter((d) => d.code !== STATUS_DIAGNOSTIC_CODE);
    return { ...r, diagnostics: sortDiagnostics([...own, ...this.statuses]) };
  }
}

const statusOf = (kind: string, name: string, status: ObjectStatus, namespace?: string): Diagnostic => ({
  severity: 'info',
  code: STATUS_DIAGNOSTIC_CODE,
  message: `${kind} status`,
  kind,
  name,
  ...(namespace ? { namespace } : {}),
  status,
});
const cond = (type: string, status: 'True' | 'False' = 'True', reason = type, message = 'ok'): StatusCondition => ({
  type,
  status,
  reason,
  message,
});

const gatewayClass: KubeObject = {
  apiVersion: `${GROUP}/v1`,
  kind: 'GatewayClass',
  metadata: { name: 'istio' },
  spec: { controllerName: GATEWAY_CONTROLLER_NAME },
};
const gateway: KubeObject = {
  apiVersion: `${GROUP}/v1`,
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'istio', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
};
const foreignParent = {
  parentRef: { group: GROUP, kind: 'Gateway', name: 'theirs' },
  controllerName: OTHER,
  conditions: [
    {
      type: 'Accepted',
      status: 'True',
      reason: 'Accepted',
      message: 'theirs',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    },
  ],
};
const route: KubeObject = {
  apiVersion: `${GROUP}/v1`,
  kind: 'HTTPRoute',
  metadata: { name: 'reviews', namespace: 'default' },
  spec: {
    parentRefs: [{ name: 'gw' }, { name: 'theirs' }],
    rules: [{ backendRefs: [{ name: 'reviews', port: 9080 }] }],
  },
  status: { parents: [foreignParent] },
};

const classStatus = statusOf('GatewayClass', 'istio', { conditions: [cond('Accepted')] });
const gatewayStatus = (programmed: 'True' | 'False') =>
  statusOf(
    'Gateway',
    'gw',
    {
      conditions: [cond('Accepted'), cond('Programmed', programmed, programmed === 'True' ? 'Programmed' : 'Invalid')],
      listeners: [
        { name: 'http', supportedKinds: [{ kind: 'HTTPRoute' }], attachedRoutes: 1, conditions: [cond('Accepted')] },
      ],
    },
    'default',
  );
const routeStatus = (message: string) =>
  statusOf(
    'HTTPRoute',
    'reviews',
    {
      parents: [
        {
          parentRef: { name: 'gw' },
          controllerName: GATEWAY_CONTROLLER_NAME,
          conditions: [cond('Accepted', 'True', 'Accepted', message)],
        },
      ],
    },
    'default',
  );

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- status JSON read back

/** Applies a change and fires rounds until one more ran (status echoes are events too: count rounds, not events). */
async function roundAfter(h: Harness, change: () => void): Promise<void> {
  const n = h.watcher.rounds.length;
  change();
  for (let i = 0; i < 200 && h.watcher.rounds.length === n; i++) {
    await h.settle(0);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(h.watcher.rounds.length > n, 'a round ran');
}

test(
  '--write-status on the fake API server: written once, unchanged rounds write nothing, times kept/moved, other controllers kept, conflicts retried, stale parents removed',
  { timeout: 60_000 },
  async () => {
    const compiler = new StatusCompiler();
    compiler.statuses = [classStatus, gatewayStatus('True'), routeStatus('Route was valid')];
    let now = new Date('2026-03-01T10:00:00.250Z');
    const h = await startHarness({
      server: {
        objects: [...baseMesh(), gatewayClass, gateway, route],
        resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES],
      },
      compiler,
      writeStatus: { qps: 1000, burst: 1000 },
      now: () => now,
    });
    const puts = () => h.server.requests.filter((r) => r.method === 'PUT').map((r) => r.path);
    const get = (kind: string, name: string, ns?: string) =>
      h.server.get({ apiVersion: `${GROUP}/v1`, kind }, ns, name) as Json;
    try {
      assert.deepEqual(puts().sort(), [
        `/apis/${GROUP}/v1/gatewayclasses/istio/status`,
        `/apis/${GROUP}/v1/namespaces/default/gateways/gw/status`,
        `/apis/${GROUP}/v1/namespaces/default/httproutes/reviews/status`,
      ]);
      const T1 = '2026-03-01T10:00:00Z';
      assert.deepEqual(get('GatewayClass', 'istio').status, {
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: 'ok',
            observedGeneration: 1,
            lastTransitionTime: T1,
          },
        ],
      });
      const gw = get('Gateway', 'gw', 'default');
      assert.deepEqual(
        gw.status.listeners[0].supportedKinds,
        [{ group: GROUP, kind: 'HTTPRoute' }],
        'the CRD default, filled in by the server',
      );
      assert.equal(gw.metadata.generation, 1, 'a status write is not a spec change');
      const parents = get('HTTPRoute', 'reviews', 'default').status.parents;
      assert.deepEqual(parents[0], foreignParent, 'the other controller entry, untouched and first');
      assert.deepEqual(parents[1], {
        parentRef: { group: GROUP, kind: 'Gateway', name: 'gw' },
        controllerName: GATEWAY_CONTROLLER_NAME,
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: 'Route was valid',
            observedGeneration: 1,
            lastTransitionTime: T1,
          },
        ],
      });

      // A round that changes nothing the statuses say (a Service changed): no write.
      const before = puts().length;
      await roundAfter(h, () => h.server.apply(service('ratings')));
      assert.equal(h.watcher.rounds.at(-1)?.publish, 'published');
      assert.equal(puts().length, before, 'an unchanged round writes no status');

      // Programmed flips: only the Gateway is written; Programmed moves to T2, Accepted keeps T1.
      now = new Date('2026-03-01T11:00:00Z');
      compiler.statuses = [classStatus, gatewayStatus('False'), routeStatus('Route was valid')];
      await roundAfter(h, () => h.server.apply(service('details')));
      assert.deepEqual(puts().slice(before), [`/apis/${GROUP}/v1/namespaces/default/gateways/gw/status`]);
      const times = Object.fromEntries(
        (get('Gateway', 'gw', 'default').status.conditions as Json[]).map((c) => [
          c.type,
          `${c.status} ${c.lastTransitionTime}`,
        ]),
      );
      assert.deepEqual(times, { Accepted: `True ${T1}`, Programmed: 'False 2026-03-01T11:00:00Z' });

      // Someone relabels the route while our write is on its way: 409, read again, written on top.
      compiler.statuses = [classStatus, gatewayStatus('False'), routeStatus('Route was valid, bound to 2 parents')];
      h.server.delay(200, (r) => r.method === 'PUT');
      const firstPut = h.server.nextRequest((r) => r.method === 'PUT');
      const seen = h.watcher.eventsSeen;
      h.server.apply(service('ratings', 9090));
      await until(() => h.watcher.eventsSeen > seen, 10_000, 'the Service change');
      h.clock.advance(100); // the round, whose status write is held up 200 ms by the server
      const putSeen = await firstPut;
      const current = get('HTTPRoute', 'reviews', 'default');
      h.server.apply({ ...current, metadata: { ...current.metadata, labels: { team: 'shop' } } } as KubeObject);
      await h.watcher.idle();
      h.server.clearFaults();
      await h.settle(0);
      assert.equal(putSeen.status, 409, 'the first PUT named the old resourceVersion');
      const relabelled = get('HTTPRoute', 'reviews', 'default');
      assert.deepEqual(relabelled.metadata.labels, { team: 'shop' }, "the other writer's change is kept");
      assert.equal(relabelled.status.parents[1].conditions[0].message, 'Route was valid, bound to 2 parents');
      assert.equal(relabelled.status.parents[1].conditions[0].lastTransitionTime, T1, 'still True: time kept');
      const metrics = await h.watcher.metrics.registry.metrics();
      assert.match(metrics, /meshsnap_watch_status_writes_total\{result="conflict"\} 1/);

      // The route no longer has a parent of ours: only our entry goes.
      compiler.statuses = [classStatus, gatewayStatus('False')];
      await roundAfter(h, () => h.server.apply(service('details', 9090)));
      assert.deepEqual(get('HTTPRoute', 'reviews', 'default').status.parents, [foreignParent]);
      assert.ok(
        !h.logs.some((l) => l.level === 'warn' && String(l.event).startsWith('watch.status')),
        JSON.stringify(h.logs.filter((l) => l.level === 'warn')),
      );
    } finally {
      await h.close();
    }
  },
);

test('without --write-status nothing is written', { timeout: 60_000 }, async () => {
  const compiler = new StatusCompiler();
  compiler.statuses = [classStatus];
  const h = await startHarness({
    server: { objects: [...baseMesh(), gatewayClass], resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES] },
    compiler,
  });
  try {
    assert.deepEqual(
      h.server.requests.filter((r) => r.method !== 'GET'),
      [],
    );
  } finally {
    await h.close();
  }
});

test(
  'a config change on a pinned channel is not served: its statuses are not written; after unpin they are',
  { timeout: 60_000 },
  async () => {
    const compiler = new StatusCompiler();
    compiler.statuses = [classStatus];
    const h = await startHarness({
      server: {
        objects: [...baseMesh(), gatewayClass],
        resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES],
      },
      compiler,
      writeStatus: { qps: 1000, burst: 1000 },
    });
    const puts = () => h.server.requests.filter((r) => r.method === 'PUT').length;
    try {
      assert.equal(puts(), 1, 'the first round wrote the GatewayClass status');
      const ctx = { store: h.store, channel: 'main', actor: 'alice', reason: 'freeze', now: () => new Date() };
      await pin(ctx, 'latest');
      compiler.statuses = [
        statusOf('GatewayClass', 'istio', { conditions: [cond('Accepted', 'False', 'InvalidParameters', 'bad')] }),
      ];
      await roundAfter(h, () => h.server.apply(service('ratings')));
      assert.equal(puts(), 1, 'nothing written for a candidate config');
      assert.ok(h.logs.some((l) => l.event === 'watch.status_not_written'));

      await unpin(ctx);
      await roundAfter(h, () => h.server.apply(service('details')));
      assert.equal(puts(), 2);
      const cls = h.server.get({ apiVersion: `${GROUP}/v1`, kind: 'GatewayClass' }, undefined, 'istio') as Json;
      assert.equal(cls.status.conditions[0].status, 'False');
    } finally {
      await h.close();
    }
  },
);
