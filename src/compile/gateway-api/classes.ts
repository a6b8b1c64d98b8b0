/**
 * Which GatewayClasses meshsnap answers for (controllerName `istio.io/gateway-controller` or
 * meshsnap's alias `meshsnap.dev/gateway-controller`), and their status.
 */
import { ISTIO_GATEWAY_CONTROLLER, OWN_CONTROLLERS, type GatewayClass } from '../../model/gateway-api.js';
import type { GatewayClassStatus } from '../../model/object-status.js';
import { conditions } from './status.js';

/** The class istiod creates itself (its built-in `istio` GatewayClass): assumed when the inputs do not hold it. */
export const BUILT_IN_CLASS = 'istio';

/** Class name → controller, for the classes meshsnap is responsible for. */
export function ownedClasses(classes: readonly GatewayClass[]): Map<string, string> {
  const out = new Map<string, string>();
  if (!classes.some((c) => c.meta.name === BUILT_IN_CLASS)) out.set(BUILT_IN_CLASS, ISTIO_GATEWAY_CONTROLLER);
  for (const c of classes)
    if (OWN_CONTROLLERS.includes(c.spec.controllerName)) out.set(c.meta.name, c.spec.controllerName);
  return out;
}

export function gatewayClassStatus(c: GatewayClass): GatewayClassStatus {
  const by = c.spec.controllerName === ISTIO_GATEWAY_CONTROLLER ? 'Istio' : 'meshsnap';
  return {
    conditions: conditions(
      [{ type: 'Accepted', reason: 'Accepted', message: `Handled by ${by} controller` }],
      c.meta.generation,
    ),
  };
}
