// least_request's pick (A48): `choiceCount` endpoints sampled uniformly with replacement, the one with the fewest
// outstanding calls wins, the earliest sample winning ties. See docs/decisions.md#policies-least-request.

export const LEAST_REQUEST_MIN_CHOICES = 2;
export const LEAST_REQUEST_MAX_CHOICES = 10;

/**
 * The choice count used for a configured `choice_count`: below 2 is refused (xds-client NACKs it; a direct
 * config throws), above 10 is treated as 10 (A48).
 */
export function leastRequestChoiceCount(configured: number | undefined): number {
  if (configured === undefined) return LEAST_REQUEST_MIN_CHOICES;
  if (!Number.isInteger(configured) || configured < LEAST_REQUEST_MIN_CHOICES) {
    throw new Error(`least_request choiceCount ${configured} must be an integer ≥ ${LEAST_REQUEST_MIN_CHOICES}`);
  }
  return Math.min(configured, LEAST_REQUEST_MAX_CHOICES);
}

/**
 * Index of the endpoint to use among `count` candidates whose outstanding-call counts are `outstanding[0..count)`.
 * Allocation-free; `random` returns [0, 1). Returns -1 when there is no candidate.
 */
export function leastRequestPick(
  outstanding: ArrayLike<number>,
  count: number,
  choiceCount: number,
  random: () => number,
): number {
  if (count <= 0) return -1;
  let best = -1;
  let bestLoad = 0;
  for (let i = 0; i < choiceCount; i++) {
    const candidate = Math.floor(random() * count);
    const load = outstanding[candidate] as number;
    if (best === -1 || load < bestLoad) {
      best = candidate;
      bestLoad = load;
    }
  }
  return best;
}
