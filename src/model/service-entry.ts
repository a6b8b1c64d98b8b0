/**
 * Istio `ServiceEntry`, `WorkloadEntry` and `WorkloadGroup` (networking.istio.io v1/v1beta1/v1alpha3),
 * shaped as in the Istio API reference and reduced to what the compiler reads. The inputs layer
 * validates raw documents into these (src/inputs/validate/service-entry.ts, workload-entry.ts).
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';
import type { Protocol, ServiceEntryLocation, ServiceEntryResolution } from './service-model.js';

export type { ServiceEntryLocation, ServiceEntryResolution };
export const SE_RESOLUTIONS: readonly ServiceEntryResolution[] = [
  'NONE',
  'STATIC',
  'DNS',
  'DNS_ROUND_ROBIN',
  'DYNAMIC_DNS',
];
export const SE_LOCATIONS: readonly ServiceEntryLocation[] = ['MESH_EXTERNAL', 'MESH_INTERNAL'];
/** The port protocols of a `DYNAMIC_DNS` entry (istiod's validation and buildOutboundClusters: a dynamic forward proxy's). */
export const DYNAMIC_DNS_PROTOCOLS: readonly Protocol[] = ['HTTP', 'TLS', 'GRPC', 'HTTP2'];

export interface ServiceEntryPort {
  readonly number: number;
  /** As istiod's protocol.Parse reads the written name; undefined when none was written (istiod sniffs). */
  readonly protocol?: Protocol;
  readonly name: string;
  readonly targetPort?: number;
}

/** A WorkloadEntry's spec, also the shape of a ServiceEntry's inline `endpoints`. */
export interface WorkloadEntrySpec {
  /** An IP, or a DNS name (DNS resolution only). Absent only with a `network` (reached through its gateway). */
  readonly address?: string;
  /** Service port name → the port the workload listens on. */
  readonly ports?: Readonly<Record<string, number>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly network?: string;
  /** `region/zone/subzone`. */
  readonly locality?: string;
  readonly weight?: number;
  readonly serviceAccount?: string;
}

export interface ServiceEntrySpec {
  readonly hosts: readonly string[];
  /** IPs and CIDRs, as written. */
  readonly addresses?: readonly string[];
  readonly ports: readonly ServiceEntryPort[];
  readonly location: ServiceEntryLocation;
  readonly resolution: ServiceEntryResolution;
  readonly endpoints?: readonly WorkloadEntrySpec[];
  readonly workloadSelector?: Readonly<Record<string, string>>;
  readonly exportTo?: readonly string[];
  readonly subjectAltNames?: readonly string[];
}

export interface ServiceEntry {
  readonly kind: 'ServiceEntry';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  /** istiod orders the services of one host by age: a namespace sees the oldest it may see (model/service-entries.ts). */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  readonly spec: ServiceEntrySpec;
}

/** istiod's WorkloadEntry health check switch (status.WorkloadEntryHealthCheckAnnotation). */
export const HEALTH_CHECKS_ANNOTATION = 'proxy.istio.io/health-checks-enabled';

export interface WorkloadEntry {
  readonly kind: 'WorkloadEntry';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  /** Labels are metadata.labels merged over spec.labels (metadata wins), as istiod merges them. */
  readonly spec: WorkloadEntrySpec;
  /**
   * False when health checks are on (annotation `proxy.istio.io/health-checks-enabled: "true"`)
   * and the `Healthy` condition is not `True`: istiod then leaves the entry out of every service.
   */
  readonly healthy: boolean;
}

/** A WorkloadGroup: the template of auto-registered WorkloadEntries. Validated and kept; it makes no endpoint. */
export interface WorkloadGroup {
  readonly kind: 'WorkloadGroup';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: {
    readonly metadata?: {
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
    };
    readonly template: WorkloadEntrySpec;
  };
}
