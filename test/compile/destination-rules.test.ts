import { test } from 'node:test';
import assert from 'node:assert/strict';
import { context, destinationRule, endpoint, host, model, service } from './clusters-model.js';

const codes = (ctx: ReturnType<typeof context>) =>
  ctx.diags.all.map((d) => `${d.code}:${d.namespace}/${d.name}`).sort();

test('short hosts resolve in the rule’s namespace', () => {
  const ctx = context(
    model([service('reviews'), service('reviews', { ns: 'prod' })], {}, [
      destinationRule('prod', 'r', { host: 'reviews' }),
    ]),
  );
  assert.equal(ctx.destinationRules.lookup(host('reviews', 'prod'))?.sources[0]?.meta.name, 'r');
  assert.equal(ctx.destinationRules.lookup(host('reviews')), undefined);
});

test('own namespace beats root namespace beats other namespaces', () => {
  const svc = service('reviews');
  const rules = [
    destinationRule('zzz', 'other', { host: host('reviews') }),
    destinationRule('istio-system', 'root', { host: host('reviews') }),
    destinationRule('aaa', 'first-other', { host: host('reviews') }),
  ];
  assert.equal(
    context(model([svc], {}, rules)).destinationRules.lookup(host('reviews'))?.sources[0]?.meta.name,
    'root',
  );
  const own = [...rules, destinationRule('default', 'own', { host: 'reviews' })];
  assert.equal(context(model([svc], {}, own)).destinationRules.lookup(host('reviews'))?.sources[0]?.meta.name, 'own');
  const others = rules.filter((r) => r.meta.namespace !== 'istio-system');
  const ctx = context(model([svc], {}, others));
  assert.equal(ctx.destinationRules.lookup(host('reviews'))?.sources[0]?.meta.name, 'first-other');
  assert.ok(codes(ctx).includes('shadowed-destination-rule:zzz/other'));
});

test('rules for the same host in one namespace are merged like istiod', () => {
  const rules = [
    destinationRule('default', 'b', {
      host: 'reviews',
      trafficPolicy: { loadBalancer: { simple: 'RANDOM' } },
      subsets: [
        { name: 'v2', labels: { version: 'v2' } },
        { name: 'v1', labels: { version: 'other' } },
      ],
    }),
    destinationRule('default', 'a', { host: 'reviews', subsets: [{ name: 'v1', labels: { version: 'v1' } }] }),
  ];
  const ctx = context(model([service('reviews')], {}, rules));
  const r = ctx.destinationRules.lookup(host('reviews'));
  assert.deepEqual(
    r?.sources.map((s) => s.meta.name),
    ['a', 'b'],
  );
  assert.deepEqual(
    r?.spec.subsets?.map((s) => `${s.name}=${s.labels?.version}`),
    ['v1=v1', 'v2=v2'],
  );
  assert.equal(r?.spec.trafficPolicy?.loadBalancer?.simple, 'RANDOM', 'the first rule with a traffic policy wins');
  assert.ok(codes(ctx).includes('merged-destination-rule:default/b'));
  const dup = ctx.diags.all.find((d) => d.code === 'duplicate-subset');
  assert.equal(dup?.name, 'b');
  assert.equal(dup?.field, 'spec.subsets[1].name');
});

test('wildcard hosts apply when no exact rule exists; the most specific wins', () => {
  const svcs = [service('reviews'), service('ratings')];
  const rules = [
    destinationRule('default', 'all', { host: '*.svc.cluster.local' }),
    destinationRule('default', 'ns', { host: '*.default.svc.cluster.local' }),
    destinationRule('default', 'exact', { host: 'ratings' }),
  ];
  const ctx = context(model(svcs, {}, rules));
  assert.equal(ctx.destinationRules.lookup(host('reviews'))?.sources[0]?.meta.name, 'ns');
  assert.equal(ctx.destinationRules.lookup(host('ratings'))?.sources[0]?.meta.name, 'exact');
});

test('other namespaces are tried in name order, exact and wildcard rules alike', () => {
  const svc = service('reviews');
  const lookup = (rules: ReturnType<typeof destinationRule>[]) =>
    context(model([svc, service('ratings')], {}, rules)).destinationRules.lookup(host('reviews'))?.sources[0]?.meta
      .name;
  const exact = [
    destinationRule('aaa', 'other-host', { host: host('ratings') }),
    destinationRule('ccc', 'exact-c', { host: host('reviews') }),
    destinationRule('bbb', 'exact-b', { host: host('reviews') }),
  ];
  // A namespace with rules for other hosts only is passed over; the first namespace holding one wins.
  assert.equal(lookup(exact), 'exact-b');
  assert.equal(lookup([...exact, destinationRule('abc', 'wild', { host: '*.svc.cluster.local' })]), 'wild');
  assert.equal(lookup([...exact, destinationRule('bbc', 'wild', { host: '*.svc.cluster.local' })]), 'exact-b');
  assert.equal(lookup([...exact, destinationRule('aab', 'unmatched', { host: '*.example.com' })]), 'exact-b');
});

test('problems are reported with where they are', () => {
  const rules = [
    destinationRule('default', 'ghost', { host: 'nope' }, 3),
    destinationRule('default', 'typo', {
      host: 'reviews',
      subsets: [
        { name: 'v1', labels: { version: 'v1' } },
        { name: 'v3', labels: { version: 'v3' } },
      ],
    }),
    destinationRule('default', 'selected', { host: 'ratings', workloadSelector: { matchLabels: { app: 'x' } } }),
  ];
  const eps = { [host('reviews')]: { 9080: [endpoint('10.0.0.1', { labels: { version: 'v1' } })] } };
  const ctx = context(model([service('reviews'), service('ratings')], eps, rules));
  const unknown = ctx.diags.all.find((d) => d.code === 'unknown-host');
  assert.deepEqual(
    { sev: unknown?.severity, name: unknown?.name, field: unknown?.field, file: unknown?.file, index: unknown?.index },
    { sev: 'warning', name: 'ghost', field: 'spec.host', file: 'dr.yaml', index: 3 },
  );
  const empty = ctx.diags.all.filter((d) => d.code === 'subset-no-endpoints');
  assert.deepEqual(
    empty.map((d) => d.field),
    ['spec.subsets[1].labels'],
  );
  // A rule with a workloadSelector is left to the views of its namespace (scope/scopes.ts): the
  // rules every sidecar shares do not hold it, and it is not reported as unused.
  assert.equal(ctx.destinationRules.lookup(host('ratings')), undefined);
  assert.ok(!codes(ctx).some((c) => c.endsWith(':default/selected')), codes(ctx).join(' '));
});
