/**
 * Per-proxy locality load balancing (src/compile/locality-lb.ts) against the cases of istiod's
 * pilot/pkg/networking/core/loadbalancer/loadbalancer_test.go (TestApplyLocalitySetting,
 * TestGetEffectiveLbSetting, TestApplyZoneAwareLoadBalancer) and util_test.go's TestLocalityMatch:
 * the same endpoint localities, weights, proxy locality and settings, and istiod's expected
 * priorities and weights. Every input is deeply frozen, so a mutation throws.
 *
 * meshsnap's proxy labels are those that follow from its locality (topology.kubernetes.io/region
 * and zone, topology.istio.io/subzone), the one cluster every endpoint is in and the default
 * (unnamed) network. istiod's failoverPriority cases are ported with that relabelling: the proxy's
 * network of the case is the endpoints' default network (no `network`), any other network keeps
 * its name, and the cluster label matches every endpoint. Cases whose expectation needs an
 * arbitrary proxy label (`key`, `region`, …) or endpoints in clusters other than the proxy's are
 * skipped (named at their place below): meshsnap skips such a failoverPriority as a whole.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  effectiveLbSetting,
  failoverPriorityLabelSupported,
  isPreferSameNode,
  localityEndpointsFor,
  localityMatches,
  type EffectiveLbSetting,
  type WrappedLocality,
} from '../../src/compile/locality-lb.js';
import type { LocalityLbSetting, ZoneAwareLbSetting } from '../../src/model/istio.js';
import type { Locality, MeshEndpoint } from '../../src/model/service-model.js';
import type { TrafficDistribution } from '../../src/model/traffic-distribution.js';
import type { envoy } from '../../src/xds/proto.js';

type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;

const NETWORK = 'topology.istio.io/network';
const CLUSTER = 'topology.istio.io/cluster';
const REGION = 'topology.kubernetes.io/region';
const ZONE = 'topology.kubernetes.io/zone';
const SUBZONE = 'topology.istio.io/subzone';
const HOSTNAME = 'kubernetes.io/hostname';

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const loc = (s: string | null): Locality => {
  const [region = '', zone = '', subzone = ''] = (s ?? '').split('/');
  return { region, zone, subzone };
};

/** One endpoint: its address, and (optionally) network, labels, load balancing weight and Kubernetes node. */
interface Ep {
  readonly ip: string;
  readonly network?: string;
  readonly node?: string;
  readonly labels?: Record<string, string>;
  readonly weight?: number;
}

/**
 * A locality of the assignment (`null`: an LocalityLbEndpoints without a locality, as istiod's
 * buildSmallClusterWithNilLocalities), with its endpoints and, optionally, its own weight.
 */
function wrapped(locality: string | null, eps: readonly (Ep | string)[], weight?: number): WrappedLocality {
  const l = loc(locality);
  const list = eps.map((e) => (typeof e === 'string' ? { ip: e } : e));
  const lle: LocalityLbEndpoints = {
    lb_endpoints: list.map((e) => ({
      endpoint: { address: { socket_address: { address: e.ip, port_value: 10001 } } },
      load_balancing_weight: { value: e.weight ?? 1 },
    })),
  };
  if (locality !== null) lle.locality = { region: l.region, zone: l.zone, sub_zone: l.subzone };
  if (weight !== undefined) lle.load_balancing_weight = { value: weight };
  const members: MeshEndpoint[] = list.map((e) => ({
    address: e.ip,
    port: 10001,
    labels: e.labels ?? {},
    locality: l,
    health: 'HEALTHY',
    tlsMode: 'istio',
    ...(e.network ? { network: e.network } : {}),
    ...(e.node ? { nodeName: e.node } : {}),
  }));
  return deepFreeze({ lle, members });
}

const apply = (
  base: readonly WrappedLocality[],
  setting: EffectiveLbSetting,
  proxy: string,
  enableFailover = true,
): readonly LocalityLbEndpoints[] => localityEndpointsFor(deepFreeze(base), setting, enableFailover, loc(proxy));

const locality = (setting: LocalityLbSetting): EffectiveLbSetting => ({ kind: 'locality', setting, force: false });
const zoneAware = (setting: ZoneAwareLbSetting): EffectiveLbSetting => ({ kind: 'zoneAware', setting });

const priorities = (out: readonly LocalityLbEndpoints[]): number[] => out.map((l) => l.priority ?? 0);
const weights = (out: readonly LocalityLbEndpoints[]): number[] => out.map((l) => l.load_balancing_weight?.value ?? 0);
const addresses = (out: readonly LocalityLbEndpoints[]): string[][] =>
  out.map((l) => (l.lb_endpoints ?? []).map((e) => e.endpoint?.address?.socket_address?.address ?? ''));

/** istiod's buildFakeCluster: seven localities (no weights of their own), one endpoint each here. */
const fakeCluster = (): WrappedLocality[] => [
  wrapped('region1/zone1/subzone1', ['10.0.0.1']),
  wrapped('region1/zone1/subzone1', ['10.0.0.2']),
  wrapped('region1/zone1/subzone2', ['10.0.0.3']),
  wrapped('region1/zone1/subzone3', ['10.0.0.4']),
  wrapped('region1/zone2', ['10.0.0.5']),
  wrapped('region2', ['10.0.0.6']),
  wrapped('region3', ['10.0.0.7']),
];

/** istiod's buildWrappedLocalityLbEndpoints, with the relabelling of the header (`proxyNetwork` becomes the default network). */
const failoverPriorityCluster = (proxyNetwork: string): WrappedLocality[] => {
  const ep = (ip: string, network: string): Ep => (network === proxyNetwork ? { ip } : { ip, network });
  return [
    wrapped('region1/zone1/subzone1', [ep('1.1.1.1', 'n1'), ep('2.2.2.2', 'n2')]),
    wrapped('region2/zone2/subzone2', [ep('3.3.3.3', 'n1'), ep('4.4.4.4', 'n2')]),
    wrapped('region3/zone3/subzone3', [ep('1.2.3.4', 'n1'), ep('2.3.4.5', 'n2')]),
  ];
};

/** istiod's buildWrappedLocalityLbEndpointsForFailoverPriorityWithFailover, relabelled likewise. */
const failoverPriorityWithFailoverCluster = (proxyNetwork: string): WrappedLocality[] => {
  const one = (l: string, ip: string, network: string): WrappedLocality =>
    wrapped(l, [network === proxyNetwork ? { ip } : { ip, network }]);
  return [
    one('region1/zone1/subzone1', '1.1.1.1', 'n1'),
    one('region1/zone2/subzone2', '2.2.2.2', 'n2'),
    one('region2/zone2/subzone2', '3.3.3.3', 'n1'),
    one('region3/zone3/subzone3', '4.4.4.4', 'n2'),
    one('region2/zone2/subzone2', '5.5.5.5', 'n2'),
    one('region3/zone3/subzone3', '6.6.6.6', 'n1'),
  ];
};

const PROXY = 'region1/zone1/subzone1';

describe('locality-lb: distribute (istiod applyLocalityWeights)', () => {
  test('distribution between subzones: the to-weight split over the localities it matches, the rest emptied', () => {
    const base = fakeCluster();
    const out = apply(
      base,
      locality({
        distribute: [
          {
            from: 'region1/zone1/subzone1',
            to: { 'region1/zone1/subzone1': 80, 'region1/zone1/subzone2': 15, 'region1/zone1/subzone3': 5 },
          },
        ],
      }),
      PROXY,
    );
    assert.deepEqual(weights(out), [40, 40, 15, 5, 0, 0, 0]);
    assert.deepEqual(addresses(out), [['10.0.0.1'], ['10.0.0.2'], ['10.0.0.3'], ['10.0.0.4'], [], [], []]);
    assert.deepEqual(priorities(out), [0, 0, 0, 0, 0, 0, 0]);
  });

  test('wildcards split by the localities own weights, rounded up; a to-weight 0 leaves the weight as it was', () => {
    const base = [
      wrapped('region1/zone1/subzone1', ['10.0.0.1'], 2),
      wrapped('region1/zone2/subzone1', ['10.0.0.2'], 1),
      wrapped('region2/zone1/subzone1', ['10.0.0.3'], 3),
      wrapped('region3/zone1/subzone1', ['10.0.0.4'], 4),
      wrapped('region4/zone1/subzone1', ['10.0.0.5'], 5),
    ];
    const out = apply(
      base,
      locality({
        distribute: [
          { from: 'region9/*', to: { '*': 100 } }, // does not match the proxy: skipped
          { from: 'region1/*', to: { 'region1/*': 10, 'region2/zone1/*': 7, region3: 0 } },
          { from: '*', to: { '*': 100 } }, // a later matching rule is not used
        ],
      }),
      PROXY,
    );
    // region1: 10 over weights 2 and 1 → 6.67 → 7 and 3.33 → 4; region2: 7; region3 matched with 0: kept at 4.
    assert.deepEqual(weights(out), [7, 4, 7, 4, 5]);
    assert.deepEqual(addresses(out), [['10.0.0.1'], ['10.0.0.2'], ['10.0.0.3'], ['10.0.0.4'], []]);
    assert.equal(out[3], base[3]?.lle, 'a locality matched with weight 0 is returned as it was');
  });

  test('distribute applies without outlier detection, and no matching from leaves the assignment as it is', () => {
    const base = fakeCluster();
    const setting = locality({ distribute: [{ from: 'region1', to: { region2: 100 } }] });
    assert.deepEqual(weights(apply(base, setting, PROXY, false)), [0, 0, 0, 0, 0, 100, 0]);
    const out = apply(base, setting, 'region2/zone1/subzone1');
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });
});

describe('locality-lb: failover (istiod applyLocalityFailover)', () => {
  const failover = locality({ failover: [{ from: 'region1', to: 'region2' }] });

  test('Failover: all priorities', () => {
    // Same subzone 0, same zone 1, same region 2, the failover target region 3, other regions 4.
    assert.deepEqual(priorities(apply(fakeCluster(), failover, PROXY)), [0, 0, 1, 1, 2, 3, 4]);
  });

  test('Failover: priorities with gaps are compacted', () => {
    const base = [
      wrapped('region1/zone1/subzone2', ['10.0.0.1']),
      wrapped('region2/zone1/subzone2', ['10.0.0.2']),
      wrapped('region2/zone1/subzone2', ['10.0.0.3']),
    ];
    assert.deepEqual(priorities(apply(base, failover, PROXY)), [0, 1, 1]);
  });

  test('Failover: priorities with some nil localities', () => {
    const base = [
      wrapped('region1/zone1/subzone2', ['10.0.0.1']),
      wrapped(null, ['10.0.0.2']),
      wrapped('region2/zone1/subzone2', ['10.0.0.3']),
    ];
    assert.deepEqual(priorities(apply(base, failover, PROXY)), [0, 2, 1]);
  });

  test('Failover: with locality lb disabled there is no setting, so no priorities', () => {
    assert.equal(effectiveLbSetting({}, { localityLbSetting: { enabled: false } }), undefined);
    assert.equal(effectiveLbSetting({ localityLbSetting: { enabled: false } }, undefined), undefined);
  });

  test('default failover: subzone 0, zone 1, region 2, others 3, compacted to contiguous priorities', () => {
    assert.deepEqual(priorities(apply(fakeCluster(), locality({}), PROXY)), [0, 0, 1, 1, 2, 3, 3]);
    const base = [
      wrapped('region3/zone1/subzone1', ['10.0.0.1']),
      wrapped('region1/zone2/subzone1', ['10.0.0.2']),
      wrapped('region1/zone1/subzone1', ['10.0.0.3']),
    ];
    const out = apply(base, locality({}), PROXY);
    assert.deepEqual(priorities(out), [2, 1, 0]);
    assert.equal(out[2], base[2]?.lle, 'a locality left at priority 0 is returned as it was');
    assert.notEqual(out[0], base[0]?.lle);
    assert.equal(base[0]?.lle.priority, undefined);
  });

  test('a failover rule for another region is not used; the first rule from the proxy region is', () => {
    const setting = locality({
      failover: [
        { from: 'region9', to: 'region3' },
        { from: 'region1', to: 'region3' },
        { from: 'region1', to: 'region2' },
      ],
    });
    assert.deepEqual(priorities(apply(fakeCluster(), setting, PROXY)), [0, 0, 1, 1, 2, 4, 3]);
  });

  test('failover needs outlier detection: without it the assignment is returned unchanged', () => {
    const base = fakeCluster();
    const out = apply(base, failover, PROXY, false);
    assert.equal(out.length, base.length);
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });

  test('a proxy in the only locality leaves every LocalityLbEndpoints as it was', () => {
    const base = [wrapped(PROXY, ['10.0.0.1']), wrapped(PROXY, ['10.0.0.2'])];
    const out = apply(base, failover, PROXY);
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });
});

describe('locality-lb: failoverPriority (istiod applyFailoverPriorities)', () => {
  const fp = (failoverPriority: string[]): EffectiveLbSetting => locality({ failoverPriority });

  test('match none label: no endpoint in the proxy network, each locality whole at priority 0', () => {
    // istiod: proxy network and cluster "test", which no endpoint has.
    const out = apply(failoverPriorityCluster('test'), fp([NETWORK, CLUSTER]), PROXY);
    assert.deepEqual(priorities(out), [0, 0, 0]);
    assert.deepEqual(weights(out), [2, 2, 2]);
    assert.deepEqual(addresses(out), [
      ['1.1.1.1', '2.2.2.2'],
      ['3.3.3.3', '4.4.4.4'],
      ['1.2.3.4', '2.3.4.5'],
    ]);
  });

  test('match network label: each locality split in the proxy network (0) and the other (1)', () => {
    const out = apply(failoverPriorityCluster('n1'), fp([NETWORK, CLUSTER]), PROXY);
    assert.deepEqual(priorities(out), [0, 1, 0, 1, 0, 1]);
    assert.deepEqual(weights(out), [1, 1, 1, 1, 1, 1]);
    assert.deepEqual(addresses(out), [['1.1.1.1'], ['2.2.2.2'], ['3.3.3.3'], ['4.4.4.4'], ['1.2.3.4'], ['2.3.4.5']]);
  });

  // Skipped: "not match the first n label" (proxy cluster c1, endpoints in clusters c1..c4) and
  // "match all labels" (the arbitrary proxy label `key`): meshsnap compiles one cluster and reads no
  // proxy labels other than the topology ones.

  test('priority assignment as per the overridden value', () => {
    // The proxy's own network (n2 in istiod's case) does not matter: the override names n1.
    const out = apply(failoverPriorityCluster('none'), fp([`${NETWORK}=n1`]), PROXY);
    assert.deepEqual(priorities(out), [0, 1, 0, 1, 0, 1]);
    assert.deepEqual(weights(out), [1, 1, 1, 1, 1, 1]);
    assert.deepEqual(addresses(out), [['1.1.1.1'], ['2.2.2.2'], ['3.3.3.3'], ['4.4.4.4'], ['1.2.3.4'], ['2.3.4.5']]);
  });

  test('no endpoints with overridden value', () => {
    const base = failoverPriorityCluster('none');
    const out = apply(base, fp([`${NETWORK}=n3`]), PROXY);
    assert.deepEqual(priorities(out), [0, 0, 0]);
    assert.deepEqual(weights(out), [2, 2, 2]);
    assert.deepEqual(addresses(out), [
      ['1.1.1.1', '2.2.2.2'],
      ['3.3.3.3', '4.4.4.4'],
      ['1.2.3.4', '2.3.4.5'],
    ]);
    // The endpoints themselves are shared, never copied.
    assert.equal(out[0]?.lb_endpoints?.[1], base[0]?.lle.lb_endpoints?.[1]);
  });

  test('FailoverPriority including locality (topology region and zone labels)', () => {
    // istiod's case uses the plain labels `region` and `zone` set from each endpoint's locality,
    // with the proxy's at region2/zone2: here the topology labels, which follow from localities.
    const out = apply(failoverPriorityWithFailoverCluster('n1'), fp([NETWORK, REGION, ZONE]), 'region2/zone2/subzone9');
    // n1 r1 z1, n2 r1 z2, n1 r2 z2, n2 r3 z3, n2 r2 z2, n1 r3 z3
    assert.deepEqual(priorities(out), [1, 3, 0, 3, 2, 1]);
    assert.deepEqual(weights(out), [1, 1, 1, 1, 1, 1]);
  });

  test('FailoverPriority with Failover: label priorities first, then the locality failover within each', () => {
    // istiod: proxy network n2, cluster c2; failover region1 → region2. The cluster label matches
    // every endpoint in meshsnap (one cluster), which leaves istiod's expected priorities as they are.
    const setting = locality({ failoverPriority: [NETWORK, CLUSTER], failover: [{ from: 'region1', to: 'region2' }] });
    const out = apply(failoverPriorityWithFailoverCluster('n2'), setting, PROXY);
    assert.deepEqual(priorities(out), [3, 0, 4, 2, 1, 5]);
    assert.deepEqual(weights(out), [1, 1, 1, 1, 1, 1]);
  });

  test("a split locality's weight is the sum of its endpoints' weights", () => {
    const base = [
      wrapped(
        'region1/zone1/subzone1',
        [
          { ip: '10.0.0.1', weight: 3 },
          { ip: '10.0.0.2', weight: 4, network: 'n2' },
          { ip: '10.0.0.3', weight: 5 },
        ],
        12,
      ),
    ];
    const out = apply(base, fp([NETWORK]), PROXY);
    assert.deepEqual(addresses(out), [['10.0.0.1', '10.0.0.3'], ['10.0.0.2']]);
    assert.deepEqual(weights(out), [8, 4]);
    assert.deepEqual(priorities(out), [0, 1]);
  });

  test('an overridden network first is not the skipped network label: a mismatch ranks by position', () => {
    // istiod compares failoverPriority[0] itself with the network label name, so `network=n1`
    // first is an ordinary label: n2 endpoints are at the lowest priority whatever their region.
    const base = [
      wrapped('region1/zone1/subzone1', [
        { ip: '10.0.0.1', network: 'n1' },
        { ip: '10.0.0.2', network: 'n2' },
      ]),
      wrapped('region2/zone1/subzone1', [
        { ip: '10.0.0.3', network: 'n1' },
        { ip: '10.0.0.4', network: 'n2' },
      ]),
    ];
    const out = apply(base, fp([`${NETWORK}=n1`, REGION]), PROXY);
    assert.deepEqual(addresses(out), [['10.0.0.1'], ['10.0.0.2'], ['10.0.0.3'], ['10.0.0.4']]);
    assert.deepEqual(priorities(out), [0, 2, 1, 2]);
    // The network label itself first: a differing network is skipped and ranks below every match,
    // so the endpoints then rank by region (the proxy is in the default network, n1 and n2 differ).
    const skipped = apply(base, fp([NETWORK, REGION]), PROXY);
    assert.deepEqual(addresses(skipped), [
      ['10.0.0.1', '10.0.0.2'],
      ['10.0.0.3', '10.0.0.4'],
    ]);
    assert.deepEqual(priorities(skipped), [0, 1]);
  });

  test('unsupported labels (not topology, no override): the whole failoverPriority is skipped', () => {
    assert.equal(failoverPriorityLabelSupported('key'), false);
    assert.equal(failoverPriorityLabelSupported('kubernetes.io/hostname'), false);
    assert.equal(failoverPriorityLabelSupported('key=value'), true);
    assert.equal(failoverPriorityLabelSupported('key='), true, 'an override with the empty value');
    // istiod splits on every `=`: other than two parts is no override, but the label before the first.
    assert.equal(failoverPriorityLabelSupported('key=a=b'), false);
    assert.equal(failoverPriorityLabelSupported(`${REGION}=a=b`), true);
    for (const l of [NETWORK, CLUSTER, REGION, ZONE, 'topology.istio.io/subzone'])
      assert.equal(failoverPriorityLabelSupported(l), true, l);
    // With `key` among the labels, only the locality failover applies (its default priorities).
    const setting = locality({ failoverPriority: [NETWORK, 'key'], failover: [{ from: 'region1', to: 'region2' }] });
    assert.deepEqual(priorities(apply(fakeCluster(), setting, PROXY)), [0, 0, 1, 1, 2, 3, 4]);
  });

  test("an entry with two `=` is the label before the first, valued as the proxy's", () => {
    const base = [wrapped('region1/zone1/subzone1', ['10.0.0.1']), wrapped('region2/zone1/subzone1', ['10.0.0.2'])];
    assert.deepEqual(priorities(apply(base, fp([`${REGION}=region2=x`]), PROXY)), [0, 1]);
    assert.deepEqual(priorities(apply(base, fp([`${REGION}=region2`]), PROXY)), [1, 0]);
  });

  test('failoverPriority needs outlier detection too', () => {
    const base = failoverPriorityCluster('n1');
    const out = apply(base, fp([NETWORK]), PROXY, false);
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });
});

describe('locality-lb: zone-aware (istiod ApplyZoneAwareLoadBalancer)', () => {
  test('zone-aware without explicit failover still region-buckets', () => {
    const out = apply(fakeCluster(), zoneAware({ enabled: true }), PROXY);
    assert.deepEqual(priorities(out), [0, 0, 0, 0, 0, 1, 1]);
  });

  test('zone-aware Failover keeps same-region endpoints at priority 0', () => {
    const out = apply(fakeCluster(), zoneAware({ failover: [{ from: 'region1', to: 'region2' }] }), PROXY);
    assert.deepEqual(priorities(out), [0, 0, 0, 0, 0, 1, 2]);
  });

  test('zone-aware Failover with no matching rule compacts to two priorities', () => {
    const out = apply(fakeCluster(), zoneAware({ failover: [{ from: 'region9', to: 'region2' }] }), PROXY);
    assert.deepEqual(priorities(out), [0, 0, 0, 0, 0, 1, 1]);
  });

  test('zone-aware FailoverPriority delegates to label-based priority, then regions', () => {
    const out = apply(failoverPriorityCluster('n1'), zoneAware({ failoverPriority: [NETWORK, CLUSTER] }), PROXY);
    assert.ok(out.length > 0);
    assert.ok(priorities(out).includes(0));
    // Label priority (network match 0, else 1) times 3 plus the region bucket (proxy region 0, else 2).
    assert.deepEqual(addresses(out), [['1.1.1.1'], ['2.2.2.2'], ['3.3.3.3'], ['4.4.4.4'], ['1.2.3.4'], ['2.3.4.5']]);
    assert.deepEqual(priorities(out), [0, 2, 1, 3, 1, 3]);
  });

  test('zone-aware applies without outlier detection (istiod forces failover)', () => {
    const out = apply(fakeCluster(), zoneAware({}), PROXY, false);
    assert.deepEqual(priorities(out), [0, 0, 0, 0, 0, 1, 1]);
  });

  test('zone-aware disabled leaves the priorities as they are', () => {
    const base = fakeCluster();
    const out = apply(base, zoneAware({ enabled: false, failover: [{ from: 'region1', to: 'region2' }] }), PROXY);
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });

  test('zone-aware in the proxy region only: nothing changes', () => {
    const base = fakeCluster().slice(0, 5);
    const out = apply(base, zoneAware({}), PROXY);
    base.forEach((w, i) => assert.equal(out[i], w.lle));
  });
});

describe('locality-lb: effectiveLbSetting (istiod GetEffectiveLbSetting)', () => {
  const failover = [{ from: 'r1', to: 'r2' }];
  const cases: {
    name: string;
    mesh: { localityLbSetting?: LocalityLbSetting; zoneAwareLbSetting?: ZoneAwareLbSetting };
    rule?: { localityLbSetting?: LocalityLbSetting; zoneAwareLbSetting?: ZoneAwareLbSetting };
    svc?: TrafficDistribution;
    want: EffectiveLbSetting | undefined;
  }[] = [
    // istiod's "all disabled" has no mesh setting at all; meshsnap's unset mesh setting is Istio's
    // default mesh config, whose localityLbSetting is enabled.
    { name: 'mesh default: locality enabled', mesh: {}, want: locality({ enabled: true }) },
    { name: 'mesh locality only', mesh: { localityLbSetting: {} }, want: locality({}) },
    { name: 'dr locality only', mesh: {}, rule: { localityLbSetting: {} }, want: locality({}) },
    {
      name: 'dr locality only override',
      mesh: {},
      rule: { localityLbSetting: { enabled: true } },
      want: locality({ enabled: true }),
    },
    {
      name: 'dr locality wins over mesh locality',
      mesh: { localityLbSetting: {} },
      rule: { localityLbSetting: { failover } },
      want: locality({ failover }),
    },
    { name: 'mesh locality disabled', mesh: { localityLbSetting: { enabled: false } }, want: undefined },
    {
      name: 'dr locality disabled overrides mesh locality enabled',
      mesh: { localityLbSetting: { enabled: true } },
      rule: { localityLbSetting: { enabled: false } },
      want: undefined,
    },
    {
      name: 'dr locality enabled overrides mesh locality disabled',
      mesh: { localityLbSetting: { enabled: false } },
      rule: { localityLbSetting: { enabled: true } },
      want: locality({ enabled: true }),
    },
    { name: 'mesh zone-aware only', mesh: { zoneAwareLbSetting: {} }, want: zoneAware({}) },
    { name: 'dr zone-aware only', mesh: {}, rule: { zoneAwareLbSetting: { failover } }, want: zoneAware({ failover }) },
    {
      name: 'dr zone-aware wins over mesh zone-aware',
      mesh: { zoneAwareLbSetting: {} },
      rule: { zoneAwareLbSetting: { failover } },
      want: zoneAware({ failover }),
    },
    {
      name: 'dr zone-aware wins over mesh locality',
      mesh: { localityLbSetting: { failover } },
      rule: { zoneAwareLbSetting: {} },
      want: zoneAware({}),
    },
    {
      name: 'dr locality wins over mesh zone-aware',
      mesh: { zoneAwareLbSetting: {} },
      rule: { localityLbSetting: { failover } },
      want: locality({ failover }),
    },
    {
      name: 'mesh zone-aware wins over mesh locality when both set',
      mesh: { localityLbSetting: {}, zoneAwareLbSetting: { failover } },
      want: zoneAware({ failover }),
    },
    {
      name: 'mesh zone-aware disabled',
      mesh: { zoneAwareLbSetting: { enabled: false } },
      want: zoneAware({ enabled: false }),
    },
    {
      name: 'mesh zone-aware disabled wins over mesh locality enabled',
      mesh: { localityLbSetting: { enabled: true }, zoneAwareLbSetting: { enabled: false } },
      want: zoneAware({ enabled: false }),
    },
    {
      name: 'dr zone-aware disabled overrides mesh locality enabled',
      mesh: { localityLbSetting: { enabled: true } },
      rule: { zoneAwareLbSetting: { enabled: false } },
      want: zoneAware({ enabled: false }),
    },
    {
      name: 'dr zone-aware enabled overrides mesh zone-aware disabled',
      mesh: { zoneAwareLbSetting: { enabled: false } },
      rule: { zoneAwareLbSetting: { enabled: true } },
      want: zoneAware({ enabled: true }),
    },
    {
      name: 'dr zone-aware wins over a dr locality setting',
      mesh: {},
      rule: { localityLbSetting: { enabled: true }, zoneAwareLbSetting: { failover } },
      want: zoneAware({ failover }),
    },
    {
      name: 'a dr without locality settings falls through to the mesh',
      mesh: { zoneAwareLbSetting: { failover } },
      rule: {},
      want: zoneAware({ failover }),
    },
    // The Service's traffic distribution: forced failover on istiod's topology labels.
    {
      name: 'prefer same zone service over mesh locality',
      mesh: { localityLbSetting: {} },
      svc: 'PreferSameZone',
      want: { kind: 'locality', setting: { enabled: true, failoverPriority: [NETWORK, REGION, ZONE] }, force: true },
    },
    {
      name: 'prefer same node service over mesh locality',
      mesh: { localityLbSetting: {} },
      svc: 'PreferSameNode',
      want: {
        kind: 'locality',
        setting: { enabled: true, failoverPriority: [NETWORK, REGION, ZONE, SUBZONE, HOSTNAME] },
        force: true,
      },
    },
    {
      name: 'service traffic distribution wins over mesh zone-aware',
      mesh: { zoneAwareLbSetting: {} },
      svc: 'PreferSameZone',
      want: { kind: 'locality', setting: { enabled: true, failoverPriority: [NETWORK, REGION, ZONE] }, force: true },
    },
    {
      name: 'dr zone-aware wins over service traffic distribution',
      mesh: {},
      rule: { zoneAwareLbSetting: {} },
      svc: 'PreferSameZone',
      want: zoneAware({}),
    },
    {
      name: 'dr locality wins over service traffic distribution',
      mesh: {},
      rule: { localityLbSetting: { failover } },
      svc: 'PreferSameZone',
      want: locality({ failover }),
    },
    {
      name: 'dr locality wins over a PreferSameNode service',
      mesh: {},
      rule: { localityLbSetting: { failover } },
      svc: 'PreferSameNode',
      want: locality({ failover }),
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = effectiveLbSetting(deepFreeze(c.mesh), deepFreeze(c.rule), c.svc);
      assert.deepEqual(got, c.want);
      // Node variants (compile/endpoints.ts) exactly where PreferSameNode's own setting is in effect.
      assert.equal(isPreferSameNode(got), c.svc === 'PreferSameNode' && c.rule === undefined);
    });
  }
});

describe('locality-lb: localityMatches (istiod util.LocalityMatch)', () => {
  const full = loc('region1/zone1/subzone1');
  const noSubzone = loc('region1/zone1');
  const cases: [Locality, string, boolean][] = [
    [full, '*', true],
    [full, 'region1/*', true],
    [full, 'region1/zone1/*', true],
    [full, 'region1/zone2/*', false],
    [full, 'region1', true],
    [full, 'region1/zone1', true],
    [noSubzone, 'region1/zone1', true],
    [noSubzone, 'region1/zone1/subzone2', false],
    [full, 'region2', false],
    [full, '*/zone2', false],
    [full, '*/zone1/subzone1', true],
  ];
  for (const [l, rule, want] of cases) {
    test(`${l.region}/${l.zone}/${l.subzone} ~ ${rule}: ${want}`, () => {
      assert.equal(localityMatches(l, rule), want);
    });
  }
});

describe('locality-lb: PreferSameNode (istiod applyFailoverPriorities on network, region, zone, subzone, kubernetes.io/hostname)', () => {
  const preferSameNode = effectiveLbSetting({}, undefined, 'PreferSameNode') as EffectiveLbSetting;
  /**
   * Endpoints labelled as istiod's AugmentLabels labels them: the locality's topology labels, and
   * `kubernetes.io/hostname` = the pod's node (none for an endpoint without a pod). 7 is on n1 but
   * in another network than the proxies'.
   */
  const cluster = (): WrappedLocality[] => [
    wrapped('r1/z1/s1', [
      { ip: '1', node: 'n1' },
      { ip: '2', node: 'n2' },
      { ip: '3' },
      { ip: '7', node: 'n1', network: 'other' },
    ]),
    wrapped('r1/z1/s2', [{ ip: '4', node: 'n3' }]),
    wrapped('r1/z2/s3', [{ ip: '5', node: 'n4' }]),
    wrapped('r2/z3/s4', [{ ip: '6', node: 'n5' }]),
  ];
  const onNode = (proxy: string, node: string) =>
    localityEndpointsFor(deepFreeze(cluster()), preferSameNode, false, loc(proxy), node);

  test('a proxy on a node: its node first, then its subzone, zone, region, other regions, other networks last', () => {
    const out = onNode('r1/z1/s1', 'n1');
    // Per endpoint: the number of leading labels it shares with the proxy decides (5 - matched),
    // a differing network adds 5; each locality splits into one LocalityLbEndpoints per priority.
    assert.deepEqual(addresses(out), [['1'], ['2', '3'], ['7'], ['4'], ['5'], ['6']]);
    assert.deepEqual(priorities(out), [0, 1, 5, 2, 3, 4]);
    assert.deepEqual(weights(out), [1, 2, 1, 1, 1, 1]);
    assert.deepEqual(
      out.map((l) => l.locality?.sub_zone),
      ['s1', 's1', 's1', 's2', 's3', 's4'],
    );
  });

  test("a proxy on another node of the subzone gets that node's endpoints first", () => {
    const out = onNode('r1/z1/s1', 'n2');
    assert.deepEqual(addresses(out), [['2'], ['1', '3'], ['7'], ['4'], ['5'], ['6']]);
    assert.deepEqual(priorities(out), [0, 1, 5, 2, 3, 4]);
  });

  test('a proxy on a node of another subzone: priorities renumbered without gaps', () => {
    const out = onNode('r1/z1/s2', 'n3');
    // Raw: 4 → 0, subzone s1 → 2, zone z2 → 3, region r2 → 4, 7 (other network, subzone s1) → 7.
    assert.deepEqual(addresses(out), [['1', '2', '3'], ['7'], ['4'], ['5'], ['6']]);
    assert.deepEqual(priorities(out), [1, 4, 0, 2, 3]);
  });

  test('a proxy without a node: its subzone first, the endpoints without a node before the others', () => {
    // istiod's proxy labels lack kubernetes.io/hostname (no NODE_NAME): '' matches the endpoints without a node.
    const out = onNode('r1/z1/s1', '');
    assert.deepEqual(addresses(out), [['3'], ['1', '2'], ['7'], ['4'], ['5'], ['6']]);
    assert.deepEqual(priorities(out), [0, 1, 5, 2, 3, 4]);
  });

  test('a proxy in no locality and on no node: one priority for the located endpoints, another network after', () => {
    const out = onNode('', '');
    assert.deepEqual(addresses(out), [['1', '2', '3'], ['7'], ['4'], ['5'], ['6']]);
    assert.deepEqual(priorities(out), [0, 1, 0, 0, 0]);
  });

  test('forced: applied without outlier detection; a rule failoverPriority naming the node is still skipped', () => {
    assert.ok(isPreferSameNode(preferSameNode));
    assert.deepEqual(priorities(onNode('r1/z1/s1', 'n1')), [0, 1, 5, 2, 3, 4]);
    // A DestinationRule's kubernetes.io/hostname is read from the proxy's labels, which proxy classes
    // do not split on (README): meshsnap skips that failoverPriority and applies region/zone/subzone.
    assert.equal(failoverPriorityLabelSupported(HOSTNAME), false);
    const rule = locality({ failoverPriority: [REGION, HOSTNAME] });
    const out = localityEndpointsFor(deepFreeze(cluster()), rule, true, loc('r1/z1/s1'), 'n1');
    assert.deepEqual(priorities(out), [0, 1, 2, 3]);
  });
});
