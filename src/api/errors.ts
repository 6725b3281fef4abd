export { StoreError } from '../store/errors.js';
export { IndexRefusedError, IndexUnavailableError } from '../sidecar/errors.js';

import { scopeMissMessage, type ScopeMiss } from '../search/scope.js';
import type { SearchOutcome } from '../search/search.js';

/** A request the library cannot carry out as asked (a parameter out of range): nothing was read. */
export class RequestError extends Error {
  override readonly name: string = 'RequestError';
}

/**
 * The request names a conversation or run the stores do not hold (a typo must never read as an empty
 * answer): `missing` says which, with the closest ids. A search also carries `outcome`, the reference
 * tool's own reply to it (what `toolText` prints), for callers that answer like the reference.
 */
export class NotFoundError extends RequestError {
  override readonly name = 'NotFoundError';
  constructor(
    readonly missing: ScopeMiss,
    readonly outcome: SearchOutcome | null = null,
  ) {
    super(scopeMissMessage(missing));
  }
}

/** `showRun`'s `at` lies past the end of the run's record, which holds `length` messages. */
export class PastEndError extends RequestError {
  override readonly name = 'PastEndError';
  constructor(
    readonly at: number,
    readonly runId: string,
    readonly length: number,
  ) {
    super(`position ${at} is past the end: run ${runId} has ${length} message${length === 1 ? '' : 's'}`);
  }
}
