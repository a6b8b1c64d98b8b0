/**
 * What a listener refers to, read from its packed HttpConnectionManager without decoding the rest
 * of it (src/snapshot/references.ts): RDS names, inline route configs' clusters, and an
 * undecodable filter reported as such.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReferenceReader, resourceRefs } from '../../src/xds/references.js';
import { compileOwned } from '../../src/compile/index.js';
import { parseInputTexts } from '../../src/pipeline.js';
import {
  encodeMessage,
  packAny,
  packedMessageOf,
  type HttpConnectionManager,
  type Listener,
} from '../../src/xds/proto.js';
import { TypeName, typeUrl } from '../../src/xds/type-urls.js';
import { sample, STATE } from '../history/helpers.js';

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
  // Taken, not decoded: bytes (nothing packed them) the known reader read as an RDS name, whatever they hold now.
  const hcm = { stat_prefix: 'c', rds: { route_config_name: '7070', config_source: { ads: {} } } };
  const bytesOnly = listenerWith(encodeMessage(TypeName.HttpConnectionManager, hcm));
  assert.deepEqual(known.resourceRefs('listeners', bytesOnly).routes, ['7070']);
  const filter = bytesOnly.filter_chains?.[0]?.filters?.[0]?.typed_config as { value: Uint8Array };
  filter.value = new Uint8Array([0xff]);
  assert.deepEqual(new ReferenceReader(known).resourceRefs('listeners', bytesOnly).routes, ['7070']);
  assert.deepEqual(new ReferenceReader().resourceRefs('listeners', bytesOnly).undecodable, [
    TypeName.HttpConnectionManager,
  ]);
});

test("a packed filter's references are read from the message it was packed from, as from its bytes (every listener of bookinfo)", () => {
  const { output } = compileOwned(
    parseInputTexts([{ file: 'state.yaml', text: STATE }, sample('bookinfo-gateway.yaml')]),
  );
  let packed = 0;
  for (const table of output.groups.values())
    for (const l of table.listeners.values() as Iterable<Listener>) {
      // The same listener with each packed filter a new Any holding the same bytes (nothing packed it).
      const bytesOnly = structuredClone(l);
      for (const chain of l.filter_chains ?? [])
        for (const f of chain.filters ?? []) if (f.typed_config && packedMessageOf(f.typed_config)) packed++;
      assert.deepEqual(
        new ReferenceReader().resourceRefs('listeners', l),
        new ReferenceReader().resourceRefs('listeners', bytesOnly),
        l.name ?? '',
      );
    }
  assert.ok(packed > 10, `${packed} packed filters read`);
});

test('readRefs: the references resourceRefs gives, read again each time, not remembered (every resource of bookinfo)', () => {
  const { output } = compileOwned(
    parseInputTexts([{ file: 'state.yaml', text: STATE }, sample('bookinfo-gateway.yaml')]),
  );
  let read = 0;
  for (const table of output.groups.values())
    for (const type of ['clusters', 'listeners', 'routes'] as const)
      for (const r of table[type].values()) {
        const reader = new ReferenceReader();
        const once = reader.readRefs(type, r);
        assert.deepEqual(once, reader.resourceRefs(type, r));
        if (type === 'clusters') continue;
        read++;
        // Not remembered: each read makes its lists again; resourceRefs remembers its own.
        const fresh = new ReferenceReader();
        assert.notEqual(fresh.readRefs(type, r), fresh.readRefs(type, r));
        assert.equal(fresh.resourceRefs(type, r), fresh.resourceRefs(type, r));
      }
  assert.ok(read > 10, `${read} listeners and route configs read`);
});
