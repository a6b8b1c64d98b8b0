/**
 * The real kube-apiserver of ../shared/tools/kube-local, when one is reachable: tests that need the
 * real API server's behaviour (its validation, resourceVersions, watch semantics, TokenReview) use
 * it and skip with a clear reason otherwise. `.ci/run` starts it and exports MESHSNAP_REAL_KUBECONFIG.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeGet } from '../../src/watch/kube-http.js';

export type RealApiServer = { readonly kubeconfigPath: string; readonly kc: KubeConfig } | { readonly skip: string };

const DEFAULT_PATH = join(homedir(), '.cache', 'kube-local', 'kubeconfig');

/** The real API server, or why there is none (the tests print it as their skip reason). */
export async function realApiServer(): Promise<RealApiServer> {
  const path = process.env.MESHSNAP_REAL_KUBECONFIG ?? DEFAULT_PATH;
  const how = 'start one with ../shared/tools/kube-local/up.sh (or set MESHSNAP_REAL_KUBECONFIG)';
  if (!existsSync(path)) return { skip: `no real kube-apiserver: ${path} does not exist; ${how}` };
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const cluster = kc.getCurrentCluster();
  if (!cluster) return { skip: `no real kube-apiserver: ${path} names no current cluster` };
  try {
    await kubeGet(kc, '/version', {}, 3000);
  } catch (err) {
    return { skip: `no real kube-apiserver at ${cluster.server}: ${(err as Error).message}; ${how}` };
  }
  return { kubeconfigPath: path, kc };
}
