/**
 * Resources for the Envoy acceptance validator, run the same in Node and in workerd
 * (validate-in-workerd.test.ts): each case gives the `path rule` list of its violations.
 */
import { packAny } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { validateResource } from '../../src/xds/validate/index.js';

const cluster = (over: Record<string, unknown> = {}) => ({
  name: 'outbound|9080||reviews.default.svc.cluster.local',
  type: 3,
  eds_cluster_config: { eds_config: { ads: {} } },
  connect_timeout: { seconds: 10 },
  ...over,
});
const routes = (match: Record<string, unknown>, weights: number[]) => ({
  name: '9080',
  virtual_hosts: [
    {
      name: 'reviews:9080',
      domains: ['reviews'],
      routes: [
        {
          match,
          route: { weighted_clusters: { clusters: weights.map((w, i) => ({ name: `c${i}`, weight: { value: w } })) } },
        },
      ],
    },
  ],
});

export function runValidateCases(): Record<string, string[]> {
  const rules = (vs: readonly { path: string; rule: string }[]) => vs.map((v) => `${v.path} ${v.rule}`);
  return {
    good: rules(validateResource('clusters', cluster())),
    emptyName: rules(validateResource('clusters', cluster({ name: '' }))),
    sniInAny: rules(
      validateResource(
        'clusters',
        cluster({
          transport_socket: {
            name: 'tls',
            typed_config: packAny(TypeName.UpstreamTlsContext, { sni: 'x'.repeat(300) }),
          },
        }),
      ),
    ),
    weightsAndRe2: rules(validateResource('routes', routes({ safe_regex: { regex: 'a{2000}' } }, [0, 0]))),
    goodRoutes: rules(validateResource('routes', routes({ safe_regex: { regex: '/v[0-9]+' } }, [80, 20]))),
  };
}
