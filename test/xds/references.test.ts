/**
 * What a listener refers to, read from its packed HttpConnectionManager without decoding the rest
 * of it (src/snapshot/references.ts): RDS names, inline route configs' clusters, and an
 * undecodable filter reported as such.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReferenceReader, resourceRefs } from '../../src/xds/references.js';
import { packAny, type HttpConnectionManager, type Listener } from '../../src/xds/proto.js';
import { TypeName, typeUrl } from '../../src/xds/type-urls.js';

const listenerWith = (hcm: HttpConnectionManager | Uint8Array): Listener => ({
  name: 'l',
  filter_chains: [
    {
      filters: [
        {
          name: 'envoy.filters.network.http_connection_manager',
          typed_config:
            hcm instanceof Uint8Array
              ? { type_url: typeUrl(TypeName.HttpConnectionManager), value: hcm }
              : packAny(TypeName.HttpConnectionManager, hcm),
        },
      ],
    },
  ],
});

const router = { name: 'envoy.filters.http.router', typed_config: packAny(TypeName.Router, {}) };

test('an RDS name, with filters and other fields around it', () => {
  const refs = resourceRefs(
    'listeners',
    listenerWith({
      stat_prefix: 'outbound_0.0.0.0_8080',
      rds: { route_config_name: '8080', config_source: { ads: {} } },
      http_filters: [router],
      use_remote_address: { value: false },
    }),
  );
  assert.deepEqual(refs, { routes: ['8080'], endpoints: [], clusters: [], undecodable: [] });
});

test('an RDS block without a name refers to the empty name; none: no route', () => {
  assert.deepEqual(resourceRefs('listeners', listenerWith({ rds: { config_source: { ads: {} } } })).routes, ['']);
  assert.deepEqual(resourceRefs('listeners', listenerWith({ stat_prefix: 'x', http_filters: [router] })).routes, []);
});

test('an inline route config: the clusters of its routes, weighted clusters and mirrors', () => {
  const refs = resourceRefs(
    'listeners',
    listenerWith({
      http_filters: [router],
      route_config: {
        name: 'inline',
        virtual_hosts: [
          {
            name: 'vh',
            domains: ['*'],
            request_mirror_policies: [{ cluster: 'mirror' }],
            routes: [
              { match: { prefix: '/' }, route: { cluster: 'a' } },
              {
                match: { prefix: '/w' },
                route: { weighted_clusters: { clusters: [{ name: 'b', weight: { value: 1 } }, { name: 'c' }] } },
              },
            ],
          },
        ],
      },
    }),
  );
  assert.deepEqual(refs, { routes: [], endpoints: [], clusters: ['mirror', 'a', 'b', 'c'], undecodable: [] });
});

test('bytes that are not an HttpConnectionManager are reported undecodable', () => {
  const refs = resourceRefs('listeners', listenerWith(new Uint8Array([0x1a, 0x05, 0x12, 0x09, 0x61])));
  assert.deepEqual(refs.undecodable, [TypeName.HttpConnectionManager]);
});

test("a reader given a known one takes the packed filters' references it has read, and reads the others itself", () => {
  const known = new ReferenceReader();
  const rds = listenerWith({ stat_prefix: 'a', rds: { route_config_name: '8080', config_source: { ads: {} } } });
  const other = listenerWith({ stat_prefix: 'b', rds: { route_config_name: '9090', config_source: { ads: {} } } });
  assert.deepEqual(known.resourceRefs('listeners', rds).routes, ['8080']);
  const reader = new ReferenceReader(known);
  assert.deepEqual(reader.resourceRefs('listeners', rds), known.resourceRefs('listeners', rds));
  assert.deepEqual(reader.resourceRefs('listeners', other).routes, ['9090']);
  // Its parts are its own: the check writes its memos into them, never into the known reader's.
  const [mine] = reader.resourceRefParts('listeners', rds);
  const [theirs] = known.resourceRefParts('listeners', rds);
  assert.notEqual(mine, theirs);
  // Taken, not decoded: bytes the known reader read as an RDS name, whatever they hold now.
  const filter = rds.filter_chains?.[0]?.filters?.[0]?.typed_config as { value: Uint8Array };
  filter.value = new Uint8Array([0xff]);
  assert.deepEqual(new ReferenceReader(known).resourceRefs('listeners', rds).routes, ['8080']);
  assert.deepEqual(new ReferenceReader().resourceRefs('listeners', rds).undecodable, [TypeName.HttpConnectionManager]);
});
