import { FractionalPercent_DenominatorType } from "@xdskit/protos/envoy/type/v3/percent_pb";
import type { ValidationErrors } from "./validation.js";

/** Parts per million of a FractionalPercent, or undefined (reported) for an unknown denominator. */
export function perMillion(
  numerator: number,
  denominator: FractionalPercent_DenominatorType,
  path: string,
  errors: ValidationErrors,
): number | undefined {
  switch (denominator) {
    case FractionalPercent_DenominatorType.HUNDRED:
      return numerator * 10000;
    case FractionalPercent_DenominatorType.TEN_THOUSAND:
      return numerator * 100;
    case FractionalPercent_DenominatorType.MILLION:
      return numerator;
    default:
      errors.add(path, "unknown denominator type");
      return undefined;
  }
}
