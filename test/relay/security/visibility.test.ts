/**
 * Per-class visibility: a proxy is served only the resources of its class. Asking by name for a
 * resource another class has (and its class does not) gets nothing: SotW leaves it out of the
 * response, delta reports it in removed_resources; it is never sent.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { XDS_TYPES, XDS_TYPE_URL, type XdsType } from '../../../src/xds/type-urls.js';
import { bookinfo } from '../fixtures.js';
import { NODE, names, startHarness, type Harness } from '../protocol-client.js';

let h: Harness;
before(async () => {
  h = await startHarness();
  h.xds.setSnapshot(bookinfo());
});
after(() => h.close());

/** A resource of some other class that the productpage class does not have, per type where one exists. */
function foreign(): { type: XdsType; name: string }[] {
  const snap = bookinfo();
  const own = (type: XdsType): ReadonlyMap<string, unknown> =>
    snap.resources('sidecar/default/productpage', type) ?? new Map();
  const out: { type: XdsType; name: string }[] = [];
  for (const type of XDS_TYPES)
    for (const [classId, tables] of snap.table) {
      if (classId === 'sidecar/default/productpage') continue;
      const name = [...tables[type].keys()].find((n) => !own(type).has(n));
      if (name) {
        out.push({ type, name });
        break;
      }
    }
  return out;
}

test('a name outside the proxy’s class is not served, SotW and delta', { timeout: 10_000 }, async () => {
  const others = foreign();
  assert.ok(others.length > 0, 'bookinfo has resources some classes have and productpage’s does not');
  for (const { type, name } of others) {
    const own = [...(bookinfo().resources('sidecar/default/productpage', type)?.keys() ?? [])][0];
    const asked = own ? [own, name] : [name];
    const sotw = h.open();
    sotw.send({ node: NODE.productpage, type_url: XDS_TYPE_URL[type], resource_names: asked });
    const r = await sotw.next();
    assert.deepEqual(names(r), own ? [own] : [], `${type}: SotW serves only the class’s own`);

    const delta = h.open('DeltaAggregatedResources');
    delta.send({ node: NODE.productpage, type_url: XDS_TYPE_URL[type], resource_names_subscribe: asked });
    const d = await delta.next();
    assert.deepEqual(names(d, true), own ? [own] : [], `${type}: delta sends only the class’s own`);
    assert.deepEqual(d.removed_resources, [name], `${type}: delta says the foreign name does not exist`);
  }
});
