/**
 * A fake kube-apiserver for tests (see fake-apiserver/server.ts): `startFakeApiServer(opts)`, then
 * `apply` / `delete` objects, inject faults, and point client-node at `kubeconfig()`.
 */
export { FakeApiServer, startFakeApiServer } from './fake-apiserver/server.js';
export type { FakeApiServerOptions, KindRef, LoggedRequest } from './fake-apiserver/server.js';
export type { RequestInfo, RequestMatch } from './fake-apiserver/faults.js';
export type { KubeObject, ObjectMeta } from './fake-apiserver/store.js';
export type { OpenWatch } from './fake-apiserver/watch-stream.js';
export { DEFAULT_RESOURCES, type ResourceType } from './fake-apiserver/catalog.js';
export { until } from './fake-apiserver/wait.js';
