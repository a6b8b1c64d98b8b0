/**
 * The status writer's pure parts: merging a computed status into the object's current one
 * (transition times, other controllers' route parents, istiod's createRouteStatus order), the
 * comparison that decides whether a write is needed, the computed statuses of a compile's
 * diagnostics, and the token bucket that bounds the write rate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from '../../../src/model/diagnostics.js';
import {
  GATEWAY_CONTROLLER_NAME,
  type GatewayStatus,
  type RouteStatus,
  type StatusCondition,
  type StatusParentReference,
} from '../../../src/model/object-status.js';
import { sameStatus } from '../../../src/watch/status/compare.js';
import { computedStatuses } from '../../../src/watch/status/desired.js';
import {
  mergeStatus,
  metaTime,
  parentRefKey,
  timedConditions,
  withoutOurParents,
  type Json,
} from '../../../src/watch/status/merge.js';
import { takeToken, tokenBucket } from '../../../src/watch/status/rate-limit.js';

const T0 = '2026-01-01T00:00:00Z';
const NOW = '2026-06-01T12:00:00Z';
const OTHER = 'example.net/another-gateway-controller';

const accepted = (
  status: 'True' | 'False' = 'True',
  reason = 'Accepted',
  message = 'Route was valid',
): StatusCondition => ({
  type: 'Accepted',
  status,
  reason,
  message,
  observedGeneration: 1,
});
const resolved: StatusCondition = {
  type: 'ResolvedRefs',
  status: 'True',
  reason: 'ResolvedRefs',
  message: 'All references resolved',
  observedGeneration: 1,
};
const withTime = (c: StatusCondition, t = T0): Json => ({ ...c, lastTransitionTime: t });

const gwRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gateway', namespace: 'istio-system' };
const route = (current: unknown) => ({ kind: 'HTTPRoute', namespace: 'default', current, now: NOW });

// istiod's TestCreateRouteStatus (pilot/pkg/config/kube/gateway/conditions_test.go): a parent
// entry of another controller on the same parentRef, and ours, valid since T0.
const istiodCurrent = {
  parents: [
    { parentRef: gwRef, controllerName: OTHER, conditions: [{ type: 'foo', status: 'bar' }] },
    {
      parentRef: gwRef,
      controllerName: GATEWAY_CONTROLLER_NAME,
      conditions: [withTime(accepted()), withTime(resolved)],
    },
  ],
};

test('istiod TestCreateRouteStatus "no error": the same result gives the same status (no write)', () => {
  const computed: RouteStatus = {
    parents: [{ parentRef: gwRef, controllerName: GATEWAY_CONTROLLER_NAME, conditions: [accepted(), resolved] }],
  };
  const merged = mergeStatus(computed, route(istiodCurrent));
  assert.deepEqual(merged, istiodCurrent);
  assert.ok(sameStatus(merged, istiodCurrent));
});

test('istiod TestCreateRouteStatus "route status error": ResolvedRefs False changes the status; its time is now, Accepted keeps its time; the other controller entry is kept as it was', () => {
  const refused: StatusCondition = {
    ...resolved,
    status: 'False',
    reason: 'RefNotPermitted',
    message: 'not permitted',
  };
  const computed: RouteStatus = {
    parents: [{ parentRef: gwRef, controllerName: GATEWAY_CONTROLLER_NAME, conditions: [accepted(), refused] }],
  };
  const merged = mergeStatus(computed, route(istiodCurrent));
  assert.equal(sameStatus(merged, istiodCurrent), false);
  assert.deepEqual(merged, {
    parents: [
      istiodCurrent.parents[0],
      { ...istiodCurrent.parents[1], conditions: [withTime(accepted()), withTime(refused, NOW)] },
    ],
  });
});

test('a condition keeps its lastTransitionTime while its status stays (reason, message, generation may change), takes now when its status flips or it is new', () => {
  const before = [withTime(accepted()), withTime(resolved)];
  const newer = { ...accepted('True', 'Accepted', 'Route was valid, bound to 2 parents'), observedGeneration: 2 };
  assert.deepEqual(timedConditions([newer, resolved], before, { now: NOW }), [withTime(newer), withTime(resolved)]);
  const flipped = accepted('False', 'NotAllowedByListeners', 'no listener allows it');
  assert.deepEqual(timedConditions([flipped], before, { now: NOW }), [withTime(flipped, NOW)]);
  const programmed: StatusCondition = { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' };
  assert.deepEqual(timedConditions([programmed], undefined, { now: NOW }), [withTime(programmed, NOW)]);
  // A previous condition without a time (written by hand) gets one.
  assert.deepEqual(timedConditions([resolved], [{ ...resolved }], { now: NOW }), [withTime(resolved, NOW)]);
});

test('conditions already there keep their place, new types follow in the computed order, types no longer computed are dropped; observedGeneration falls back to the compiled generation', () => {
  const programmed: StatusCondition = { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' };
  const stale = { type: 'Ready', status: 'True', reason: 'Ready', message: 'old', lastTransitionTime: T0 };
  const before = [stale, withTime(resolved), withTime(accepted())];
  const out = timedConditions([accepted(), programmed, resolved], before, { now: NOW, generation: 7 });
  assert.deepEqual(
    out.map((c) => c.type),
    ['ResolvedRefs', 'Accepted', 'Programmed'],
  );
  assert.equal(out[2]?.observedGeneration, 7, 'the compile left it out: the generation it compiled');
  assert.equal(out[1]?.observedGeneration, 1, 'the compile set it: kept');
});

test('route parents: ours replaced in place, ours no longer computed removed, new ones appended by istiod parentRefString descending; other controllers untouched', () => {
  const ref = (name: string, sectionName?: string): StatusParentReference => ({
    name,
    ...(sectionName ? { sectionName } : {}),
  });
  const ours = (r: StatusParentReference, conditions: StatusCondition[]) => ({
    parentRef: r,
    controllerName: GATEWAY_CONTROLLER_NAME,
    conditions,
  });
  const foreign = { parentRef: ref('theirs'), controllerName: OTHER, conditions: [withTime(accepted())] };
  const current = {
    parents: [
      { ...ours(ref('b'), []), conditions: [withTime(accepted())] },
      foreign,
      { ...ours(ref('gone'), []), conditions: [withTime(accepted())] },
    ],
  };
  const computed: RouteStatus = {
    parents: [ours(ref('a'), [accepted()]), ours(ref('b'), [accepted()]), ours(ref('c', 'http'), [accepted()])],
  };
  const merged = mergeStatus(computed, route(current)) as { parents: Json[] };
  assert.deepEqual(
    merged.parents.map(
      (p) => `${(p.parentRef as Json).name as string}${p.controllerName === OTHER ? ' (theirs)' : ''}`,
    ),
    ['b', 'theirs (theirs)', 'c', 'a'],
  );
  assert.equal((merged.parents[0]?.conditions as Json[])[0]?.lastTransitionTime, T0, 'b: in place, time kept');
  assert.equal((merged.parents[3]?.conditions as Json[])[0]?.lastTransitionTime, NOW, 'a: new');
  assert.deepEqual(merged.parents[1], foreign);

  // Nothing of ours computed any more: only the others stay; nothing of ours there: nothing to do.
  assert.deepEqual(withoutOurParents(route(current)), { parents: [foreign] });
  assert.equal(withoutOurParents(route({ parents: [foreign] })), undefined);
  // meshsnap's alias controller (a GatewayClass naming meshsnap.dev/gateway-controller) is ours too.
  const alias = { ...ours(ref('x'), []), controllerName: 'meshsnap.dev/gateway-controller' };
  assert.deepEqual(withoutOurParents(route({ parents: [alias, foreign] })), { parents: [foreign] });
  assert.equal(withoutOurParents(route(undefined)), undefined);
});

test('parentRefKey is istiod parentRefString: defaults for unset group, kind and namespace; an explicit "" group (a Service) stays', () => {
  assert.equal(parentRefKey({ name: 'gw' }, 'default'), 'gateway.networking.k8s.io/Gateway/gw//0.default');
  assert.equal(
    parentRefKey({ group: '', kind: 'Service', name: 'echo', port: 7070 }, 'mesh'),
    '/Service/echo//7070.mesh',
  );
  assert.equal(
    parentRefKey({ name: 'gw', namespace: 'infra', sectionName: 'https' }, 'default'),
    parentRefKey(
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra', sectionName: 'https' },
      'x',
    ),
  );
});

test('a Gateway: conditions, listeners matched by name for their times, addresses; the whole status is ours', () => {
  const programmed: StatusCondition = { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' };
  const listener = (name: string, conditions: StatusCondition[]) => ({
    name,
    supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
    attachedRoutes: 1,
    conditions,
  });
  const computed: GatewayStatus = {
    conditions: [accepted('True', 'Accepted', 'ok'), programmed],
    listeners: [listener('http', [programmed]), listener('https', [programmed])],
    addresses: [{ type: 'IPAddress', value: '10.0.0.1' }],
  };
  const current = {
    conditions: [
      {
        type: 'Accepted',
        status: 'Unknown',
        reason: 'Pending',
        message: 'Waiting for controller',
        lastTransitionTime: '1970-01-01T00:00:00Z',
      },
    ],
    listeners: [{ ...listener('https', []), conditions: [withTime(programmed)] }],
    addresses: [{ value: 'stale' }],
  };
  const merged = mergeStatus(computed, { kind: 'Gateway', namespace: 'default', current, now: NOW });
  assert.deepEqual(merged, {
    conditions: [withTime(accepted('True', 'Accepted', 'ok'), NOW), withTime(programmed, NOW)],
    listeners: [
      { ...listener('http', []), conditions: [withTime(programmed, NOW)] },
      { ...listener('https', []), conditions: [withTime(programmed)] },
    ],
    addresses: [{ type: 'IPAddress', value: '10.0.0.1' }],
  });
  // A GatewayClass: its conditions.
  assert.deepEqual(
    mergeStatus(
      { conditions: [accepted('True', 'Accepted', 'Handled by Istio controller')] },
      { kind: 'GatewayClass', namespace: '', current: {}, now: NOW },
    ),
    {
      conditions: [withTime(accepted('True', 'Accepted', 'Handled by Istio controller'), NOW)],
    },
  );
});

test('sameStatus: equal after the CRD defaults (parentRef group/kind, supportedKinds group) and with empty lists as none; any other difference counts', () => {
  const sent = {
    parents: [
      { parentRef: { name: 'gw' }, controllerName: GATEWAY_CONTROLLER_NAME, conditions: [withTime(accepted())] },
    ],
  };
  const stored = {
    parents: [
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
        controllerName: GATEWAY_CONTROLLER_NAME,
        conditions: [withTime(accepted())],
      },
    ],
  };
  assert.ok(sameStatus(sent, stored));
  assert.ok(
    sameStatus(
      { listeners: [{ name: 'l', supportedKinds: [{ kind: 'HTTPRoute' }] }] },
      { listeners: [{ name: 'l', supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }] }] },
    ),
  );
  assert.ok(sameStatus({ parents: [] }, undefined));
  assert.ok(sameStatus({ conditions: [] }, {}));
  assert.equal(sameStatus(sent, { parents: [] }), false);
  assert.equal(
    sameStatus({ conditions: [withTime(accepted())] }, { conditions: [withTime(accepted(), NOW)] }),
    false,
    'a time is a difference',
  );
  assert.equal(
    sameStatus(
      { parents: [{ parentRef: { group: '', kind: 'Service', name: 's' } }] },
      { parents: [{ parentRef: { kind: 'Service', name: 's' } }] },
    ),
    false,
  );
});

test('computedStatuses: one per object from the gateway-api-status diagnostics (cluster-scoped: empty namespace), other diagnostics ignored', () => {
  const d = (kind: string, name: string, namespace?: string, code = 'gateway-api-status'): Diagnostic => ({
    severity: 'info',
    code,
    message: 'status',
    kind,
    name,
    ...(namespace ? { namespace } : {}),
    status: { conditions: [] },
  });
  const out = computedStatuses([
    d('GatewayClass', 'istio'),
    d('HTTPRoute', 'r', 'ns'),
    d('HTTPRoute', 'x', 'ns', 'invalid-field'),
    { severity: 'info', code: 'gateway-api-status', message: 'no status', kind: 'Gateway', name: 'g' },
  ]);
  assert.deepEqual(
    out.map((c) => c.key),
    ['GatewayClass//istio', 'HTTPRoute/ns/r'],
  );
});

test('token bucket: burst at once, then qps per second; the wait says when the next token is due', () => {
  const b = tokenBucket(10, 3, 0);
  assert.deepEqual([takeToken(b, 0), takeToken(b, 0), takeToken(b, 0)], [0, 0, 0]);
  assert.equal(takeToken(b, 0), 100);
  assert.equal(takeToken(b, 50), 50);
  assert.equal(takeToken(b, 100), 0);
  assert.equal(takeToken(b, 100), 100);
  assert.deepEqual(
    [takeToken(b, 10_000), takeToken(b, 10_000), takeToken(b, 10_000), takeToken(b, 10_000)],
    [0, 0, 0, 100],
    'refills to the burst, no more',
  );
  assert.throws(() => tokenBucket(0, 1, 0), RangeError);
});

test('metaTime: RFC 3339 in whole seconds, as metav1.Time', () => {
  assert.equal(metaTime(new Date('2026-11-24T14:30:33.987Z')), '2026-11-24T14:30:33Z');
});
