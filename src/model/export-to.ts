/**
 * exportTo visibility, as istiod's PushContext decides it (IsServiceVisible, the VirtualService
 * and DestinationRule indexes): a list as written (`*` every namespace, `.` the owner's, `~` none,
 * or namespace names), or the mesh default when the object sets none, or `*` without a default.
 */
export function exportedTo(
  exportTo: readonly string[] | undefined,
  meshDefault: readonly string[] | undefined,
  ownerNamespace: string,
  clientNamespace: string,
): boolean {
  const list = exportTo?.length ? exportTo : meshDefault?.length ? meshDefault : undefined;
  if (!list) return true;
  for (const e of list) {
    if (e === '*' || e === clientNamespace) return true;
    if (e === '.' && ownerNamespace === clientNamespace) return true;
  }
  return false;
}

/** Whether the list in effect (as `exportedTo` reads it) holds `*`: every namespace sees the object. */
export function exportedToAll(
  exportTo: readonly string[] | undefined,
  meshDefault: readonly string[] | undefined,
): boolean {
  const list = exportTo?.length ? exportTo : meshDefault?.length ? meshDefault : undefined;
  return !list || list.includes('*');
}
