/**
 * A service's traffic distribution, as istiod's GetTrafficDistribution reads it: the Service's
 * `spec.trafficDistribution`, else the `networking.istio.io/traffic-distribution` annotation of
 * the service (or ServiceEntry), else of its namespace. `PreferClose` is the older name of
 * `PreferSameZone`; an unknown annotation value means any (istiod logs a warning).
 */
export type TrafficDistribution = 'PreferSameZone' | 'PreferSameNode';

export const TRAFFIC_DISTRIBUTION_ANNOTATION = 'networking.istio.io/traffic-distribution';

export function trafficDistributionOf(
  spec: string | undefined,
  annotations: Readonly<Record<string, string>>,
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
): TrafficDistribution | undefined {
  if (spec === 'PreferSameZone' || spec === 'PreferClose') return 'PreferSameZone';
  if (spec === 'PreferSameNode') return 'PreferSameNode';
  for (const value of [
    annotations[TRAFFIC_DISTRIBUTION_ANNOTATION],
    namespaceAnnotations?.[TRAFFIC_DISTRIBUTION_ANNOTATION],
  ]) {
    if (value === undefined || value === '') continue;
    const v = value.toLowerCase();
    if (v === 'preferclose' || v === 'prefersamezone') return 'PreferSameZone';
    if (v === 'prefersamenode') return 'PreferSameNode';
    return undefined;
  }
  return undefined;
}
