/** The RBAC message shapes the authorization builder produces, and its error value. */
import type { envoy } from '../../../xds/proto.js';

export type Permission = envoy.config.rbac.v3.Permission.$Properties;
export type Principal = envoy.config.rbac.v3.Principal.$Properties;
export type Policy = envoy.config.rbac.v3.Policy.$Properties;
export type Rbac = envoy.config.rbac.v3.RBAC.$Properties;
export type CidrRange = envoy.config.core.v3.CidrRange.$Properties;

/** Why a value or rule cannot be translated (an invalid value, or an HTTP-only field on TCP). */
export class AuthzError {
  constructor(readonly message: string) {}
}

export type Result<T> = T | AuthzError;

export const isError = (v: unknown): v is AuthzError => v instanceof AuthzError;

export const RBAC_ACTION = { ALLOW: 0, DENY: 1, LOG: 2 } as const;
export type RbacAction = (typeof RBAC_ACTION)[keyof typeof RBAC_ACTION];

export const permissionAny = (): Permission => ({ any: true });
export const permissionAnd = (rules: Permission[]): Permission => ({ and_rules: { rules } });
export const permissionOr = (rules: Permission[]): Permission => ({ or_rules: { rules } });
export const permissionNot = (rule: Permission): Permission => ({ not_rule: rule });
export const principalAny = (): Principal => ({ any: true });
export const principalAnd = (ids: Principal[]): Principal => ({ and_ids: { ids } });
export const principalOr = (ids: Principal[]): Principal => ({ or_ids: { ids } });
export const principalNot = (id: Principal): Principal => ({ not_id: id });

/** `1.2.3.4` or `1.2.0.0/16` (IPv4 or IPv6) → CidrRange, as istiod's AddrStrToCidrRange (no masking). */
export function cidrRange(value: string): Result<CidrRange> {
  const slash = value.indexOf('/');
  const address = slash < 0 ? value : value.slice(0, slash);
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  const isV4 = v4 !== null && v4.slice(1).every((o) => Number(o) <= 255 && (o === '0' || !o.startsWith('0')));
  const isV6 = !isV4 && address.includes(':') && /^[0-9a-fA-F:.]+$/.test(address);
  if (!isV4 && !isV6) return new AuthzError(`invalid IP address ${JSON.stringify(value)}`);
  const bits = isV4 ? 32 : 128;
  const len = slash < 0 ? bits : Number(value.slice(slash + 1));
  if (slash >= 0 && (!/^\d+$/.test(value.slice(slash + 1)) || len > bits))
    return new AuthzError(`invalid CIDR ${JSON.stringify(value)}`);
  return { address_prefix: address, prefix_len: { value: len } };
}
