/**
 * Thrown when a variant would overlap another variant of its name: some parameter map (`witness`) matches both, so
 * which one a subscriber gets would depend on a tie-break. TP2 requires control planes to refuse this; publishing
 * with `allowOverlap` (or the server option `allowOverlappingVariants`) serves the most specific match instead
 * (docs/decisions.md#serving-variants). Nothing is changed when it is thrown.
 */
export class OverlappingVariantsError extends Error {
  override readonly name = "OverlappingVariantsError";
  readonly typeUrl: string;
  readonly resourceName: string;
  /** The canonical constraints of the two variants (`true` for the unconstrained one). */
  readonly constraints: readonly [string, string];
  /** A parameter map both variants match (keys not listed are absent). */
  readonly witness: Readonly<Record<string, string>>;

  constructor(
    typeUrl: string,
    resourceName: string,
    constraints: readonly [string, string],
    witness: Readonly<Record<string, string>>,
  ) {
    super(
      `variants of ${resourceName} (${typeUrl}) overlap: "${constraints[0]}" and "${constraints[1]}" both match the parameters ${JSON.stringify(witness)}; ` +
        "publish them with allowOverlap: true (or create the server with allowOverlappingVariants) to serve the most specific match",
    );
    this.typeUrl = typeUrl;
    this.resourceName = resourceName;
    this.constraints = constraints;
    this.witness = witness;
  }
}
