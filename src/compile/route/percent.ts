/** Istio percentages → Envoy FractionalPercent, with istiod's denominators. */
import { envoy } from '../../xds/proto.js';

export type FractionalPercent = envoy.type.v3.FractionalPercent.$Properties;
const Denominator = envoy.type.v3.FractionalPercent.DenominatorType;

/** A `Percent` (0–100, fractional) keeps its precision: per-million, truncated as istiod does (uint32 conversion). */
export const percentToFraction = (value: number): FractionalPercent => ({
  numerator: Math.trunc(value * 10_000),
  denominator: Denominator.MILLION,
});

/** An integer percentage (istiod's fallback when no `percentage` is given). */
export const integerToFraction = (value: number): FractionalPercent => ({
  numerator: value,
  denominator: Denominator.HUNDRED,
});
