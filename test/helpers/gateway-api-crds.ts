/**
 * The Gateway API CRDs on the real kube-apiserver (../shared/tools/kube-local): the committed
 * v1.2.1 copy without CEL rules (test/fixtures/gateway-api/), created when missing. They are left
 * installed (the API server is shared: another test may be using them right now), as the Istio
 * CRDs are.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { kubeGet } from '../../src/watch/kube-http.js';
import { REPO } from './paths.js';

export const GATEWAY_API_CRDS = join(REPO, 'test', 'fixtures', 'gateway-api', 'crds-v1.2.1-no-cel.yaml');

/** Creates the CRDs that are missing, then waits (bounded) until discovery serves every kind. */
export async function installGatewayApiCrds(kc: KubeConfig, timeoutMs = 30_000): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const crds = parseAllDocuments(readFileSync(GATEWAY_API_CRDS, 'utf8')).map((d) => d.toJSON() as KubernetesObject);
  for (const crd of crds) {
    const exists = await objects
      .read({ apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: crd.metadata?.name ?? '' } })
      .then(
        () => true,
        () => false,
      );
    if (!exists)
      await objects.create(crd).catch((err: unknown) => {
        // Created meanwhile by another test: fine.
        if (!String((err as { body?: unknown }).body ?? err).includes('AlreadyExists')) throw err;
      });
  }
  const want: Record<string, string[]> = {
    v1: ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes'],
    v1beta1: ['referencegrants'],
    v1alpha2: ['tcproutes', 'tlsroutes'],
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const missing: string[] = [];
    for (const [version, plurals] of Object.entries(want)) {
      const doc = (await kubeGet(kc, `/apis/gateway.networking.k8s.io/${version}`).catch(() => ({}))) as {
        resources?: { name: string }[];
      };
      const served = new Set((doc.resources ?? []).map((r) => r.name));
      missing.push(...plurals.filter((p) => !served.has(p)).map((p) => `${p}/${version}`));
    }
    if (missing.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`Gateway API CRDs not served after ${timeoutMs} ms: ${missing.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
