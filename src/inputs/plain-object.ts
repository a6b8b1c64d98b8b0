/**
 * Plain objects built from parsed data. An ordinary object (not `Object.create(null)`, which V8
 * keeps in slow dictionary mode) whose members are set as data: a `__proto__` key is kept as a
 * member, never taken for the prototype. Pure.
 */
export function setMember(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}
