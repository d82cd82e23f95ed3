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

/** What least_request reads of a candidate: its calls in flight. */
export interface OutstandingCalls {
  readonly outstanding: number;
}

/**
 * Index of the endpoint to use among `candidates`: `choiceCount` uniform samples with replacement, the fewest
 * outstanding calls winning. Allocation-free; `random` returns [0, 1). Returns -1 when there is no candidate.
 */
export function leastRequestPick(
  candidates: readonly OutstandingCalls[],
  choiceCount: number,
  random: () => number,
): number {
  const count = candidates.length;
  if (count === 0) return -1;
  let best = -1;
  let bestLoad = 0;
  for (let i = 0; i < choiceCount; i++) {
    const candidate = Math.floor(random() * count);
    const load = (candidates[candidate] as OutstandingCalls).outstanding;
    if (best === -1 || load < bestLoad) {
      best = candidate;
      bestLoad = load;
    }
  }
  return best;
}
