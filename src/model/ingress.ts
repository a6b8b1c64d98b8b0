/**
 * Kubernetes `Ingress` and `IngressClass` (networking.k8s.io/v1): only the fields istiod's ingress
 * controller (pilot/pkg/config/kube/ingress) reads. The compiler converts the Ingresses istiod would
 * serve into Istio Gateways and VirtualServices (src/compile/ingress/).
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

/** The legacy class annotation (annotation.IoKubernetesIngressClass). */
export const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
/** An IngressClass whose `spec.controller` is this one is istiod's (IstioIngressController). */
export const ISTIO_INGRESS_CONTROLLER = 'istio.io/ingress-controller';

export type IngressPathType = 'Exact' | 'Prefix' | 'ImplementationSpecific';

/** `backend.service`: a name and a port by number or by name (exactly one). */
export interface IngressServiceBackend {
  readonly name: string;
  readonly port: { readonly number: number } | { readonly name: string };
}

/** An IngressBackend: a Service, or a `resource` (istiod serves none: `service` absent then). */
export interface IngressBackend {
  readonly service?: IngressServiceBackend;
}

export interface IngressPath {
  /** As written; '' when absent. */
  readonly path: string;
  /** Absent: istiod's legacy string matching (as ImplementationSpecific). */
  readonly pathType?: IngressPathType;
  readonly backend: IngressBackend;
}

export interface IngressRule {
  /** '' when absent (istiod indexes it as `*`). */
  readonly host: string;
  /** Absent: the rule has no `http` (istiod skips it). */
  readonly paths?: readonly IngressPath[];
}

export interface IngressTls {
  readonly hosts?: readonly string[];
  readonly secretName?: string;
}

export interface IngressSpec {
  readonly ingressClassName?: string;
  /** Set when `spec.defaultBackend` is (istiod ignores it). */
  readonly hasDefaultBackend?: true;
  readonly rules: readonly IngressRule[];
  readonly tls: readonly IngressTls[];
}

export interface Ingress {
  readonly kind: 'Ingress';
  readonly apiVersion: string;
  /** Annotations: only `kubernetes.io/ingress.class`, the one istiod reads. */
  readonly meta: ObjectMeta;
  /** Orders the rules of one host (istiod's sortRulesByCreationTimestamp); absent: the oldest. */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  readonly spec: IngressSpec;
}

/** Cluster-scoped (namespace ''). */
export interface IngressClass {
  readonly kind: 'IngressClass';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: { readonly controller: string };
}

/** MeshConfig.IngressControllerMode; UNSPECIFIED processes nothing (istiod logs an invalid mode). */
export type IngressControllerMode = 'OFF' | 'DEFAULT' | 'STRICT' | 'UNSPECIFIED';

/** MeshConfig's ingress fields, present only where they differ from istiod's defaults (DEFAULT_MESH_INGRESS). */
export interface MeshIngressSettings {
  readonly ingressClass?: string;
  readonly ingressControllerMode?: IngressControllerMode;
  readonly ingressSelector?: string;
  readonly ingressService?: string;
}

/** istiod's mesh.DefaultMeshConfig values. */
export const DEFAULT_MESH_INGRESS = {
  ingressClass: 'istio',
  ingressControllerMode: 'STRICT',
  ingressSelector: '',
  ingressService: 'istio-ingressgateway',
} as const satisfies Required<MeshIngressSettings>;

/** The settings with istiod's defaults filled in. */
export const meshIngressOf = (s: MeshIngressSettings | undefined): Required<MeshIngressSettings> => ({
  ...DEFAULT_MESH_INGRESS,
  ...s,
});
