/** Parses kube-apiserver request paths into what they address. */

export type Route =
  | { readonly kind: 'coreVersions' }
  | { readonly kind: 'groupList' }
  | { readonly kind: 'group'; readonly group: string }
  | { readonly kind: 'resourceList'; readonly group: string; readonly version: string }
  | {
      readonly kind: 'resource';
      readonly group: string;
      readonly version: string;
      readonly plural: string;
      /** Set on a namespaced path (/namespaces/NS/PLURAL...). */
      readonly namespace?: string;
      /** Set when one object is addressed rather than a collection. */
      readonly name?: string;
      /** `status` for PLURAL/NAME/status. */
      readonly subresource?: 'status';
    }
  | { readonly kind: 'unknown' };

export function parsePath(pathname: string): Route {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'coreVersions' };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'groupList' };
    group = parts[1]!;
    if (parts.length === 2) return { kind: 'group', group };
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { kind: 'unknown' };
  }
  if (version === undefined) return { kind: 'unknown' };
  if (rest.length === 0) return { kind: 'resourceList', group, version };
  // /namespaces/NS/PLURAL[/NAME] is namespaced; /namespaces[/NAME] is the Namespace resource itself.
  // PLURAL/NAME/status: the status subresource (the only one served here).
  const status =
    rest[rest.length - 1] === 'status' && (rest[0] === 'namespaces' ? rest.length === 5 : rest.length === 3);
  const sub = status ? ({ subresource: 'status' } as const) : {};
  if (status) rest = rest.slice(0, -1);
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    if (rest.length > 4) return { kind: 'unknown' };
    return {
      kind: 'resource',
      group,
      version,
      namespace: rest[1]!,
      plural: rest[2]!,
      ...(rest[3] !== undefined ? { name: rest[3] } : {}),
      ...sub,
    };
  }
  if (rest.length > 2) return { kind: 'unknown' };
  return {
    kind: 'resource',
    group,
    version,
    plural: rest[0]!,
    ...(rest[1] !== undefined ? { name: rest[1] } : {}),
    ...sub,
  };
}
