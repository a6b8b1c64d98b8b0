/**
 * Every golden snapshot of the suite is one Envoy accepts: each test/golden/<case>/expected/<node>/
 * <type>.json (config_dump JSON) is read back into messages and run through the Envoy acceptance
 * validator, with the rules its proxy is held to (a proxyless gRPC class: Envoy's cross-field and
 * RE2 rules only, src/snapshot/envoy-acceptance.ts). A golden that would be NACKed fails here.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { envoyViolations } from '../../src/snapshot/envoy-acceptance.js';
import { typeNameOf, XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { fromProto3Json } from '../compile/authz/proto3-json.js';
import { REPO } from '../helpers/paths.js';

const GOLDEN = join(REPO, 'test', 'golden');
const TYPE_OF = new Map<string, XdsType>(XDS_TYPES.map((t) => [XDS_TYPE_NAME[t], t]));

/** The xDS resources (`@type` one of the four) anywhere in a config dump. */
function resourcesIn(json: unknown, out: { type: XdsType; json: Record<string, unknown> }[] = []) {
  if (Array.isArray(json)) for (const x of json) resourcesIn(x, out);
  else if (json && typeof json === 'object') {
    const o = json as Record<string, unknown>;
    const type = typeof o['@type'] === 'string' ? TYPE_OF.get(typeNameOf(o['@type'])) : undefined;
    if (type) out.push({ type, json: o });
    else for (const v of Object.values(o)) resourcesIn(v, out);
  }
  return out;
}

const cases = readdirSync(GOLDEN).filter((d) => existsSync(join(GOLDEN, d, 'expected')));

test('the golden suite has expected snapshots to check', () => {
  assert.ok(cases.length >= 20, `found ${cases.length} golden cases`);
});

for (const name of cases) {
  test(`golden ${name}: every expected resource passes the Envoy acceptance validator`, () => {
    const expected = join(GOLDEN, name, 'expected');
    let checked = 0;
    for (const node of readdirSync(expected)) {
      if (!statSync(join(expected, node)).isDirectory()) continue;
      for (const file of readdirSync(join(expected, node))) {
        const dump = JSON.parse(readFileSync(join(expected, node, file), 'utf8')) as { class: string };
        const proxyless = dump.class.startsWith('grpc/');
        for (const r of resourcesIn(dump)) {
          const { '@type': _url, ...fields } = r.json;
          const message = fromProto3Json(XDS_TYPE_NAME[r.type], fields);
          const where = `${node}/${file} ${String(message.name ?? message.cluster_name)}`;
          assert.deepEqual(envoyViolations(r.type, message, proxyless), [], where);
          checked++;
        }
      }
    }
    if (name !== 'bad-input') assert.ok(checked > 0, 'the case has resources');
  });
}
