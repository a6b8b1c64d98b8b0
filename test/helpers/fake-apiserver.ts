/**
 * A fake kube-apiserver for tests (implementation: fake-apiserver/server.ts).
 *
 *   const api = await startFakeApiServer({ objects: [...], notServed: ['networking.istio.io/v1'] });
 *   writeFileSync(kubeconfigPath, api.kubeconfig());          // or kubeConfigFor(api.kubeconfig())
 *   api.apply(obj); api.delete('Pod', 'ns', 'name');           // bump the global resourceVersion, emit events
 *   api.compact();                                             // every older watch resourceVersion → 410
 *   api.failNext(1, (r) => r.watch); api.delay(200, '/pods');  // faults; api.clearFaults()
 *   api.endWatches(); api.dropWatches(); api.bookmark();       // watch control
 *   api.addGroupVersion('networking.istio.io/v1');             // a CRD appears (removeGroupVersion: gone)
 *   api.requests / await api.nextRequest(match)                // what clients asked
 *   await api.close();                                         // destroys every socket, never hangs
 *
 * Status subresources of the Gateway API kinds (GATEWAY_API_RESOURCES): PUT and merge PATCH of
 * .../status change only the status, 409 on a stale resourceVersion, the CRDs' status defaults.
 *
 * Behaviour worth knowing (as the real server): lists of built-in kinds omit kind/apiVersion on
 * items; an unchanged apply is a no-op; an expired watch gets an in-stream ERROR 410 by default
 * (`expiredWatch: 'status'` for HTTP 410); BOOKMARKs only with allowWatchBookmarks=true, which
 * client-node's ListWatch never sends (see BookmarkWatch).
 */
export { FakeApiServer, startFakeApiServer } from './fake-apiserver/server.js';
export type { FakeApiServerOptions, KindRef, LoggedRequest } from './fake-apiserver/server.js';
export type { RequestInfo, RequestMatch } from './fake-apiserver/faults.js';
export type { KubeObject, ObjectMeta } from './fake-apiserver/store.js';
export type { OpenWatch } from './fake-apiserver/watch-stream.js';
export { DEFAULT_RESOURCES, GATEWAY_API_RESOURCES, type ResourceType } from './fake-apiserver/catalog.js';
export { until } from './fake-apiserver/wait.js';
export { BookmarkWatch, kubeConfigFor, listFnFor, recordInformer, type Recorded } from './fake-apiserver/informers.js';
