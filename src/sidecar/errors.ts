/**
 * What can go wrong with the index, by what the search does about it. None of these is ever reported
 * as the store's fault: the store's own errors are StoreError or come from the store's connection.
 */

/** The index location endangers the evidence or cannot be trusted: one line, exit status 2. */
export class IndexRefusedError extends Error {}

/** The index cannot be used here (read-only or full disk, no permission): the search replays instead. */
export class IndexUnavailableError extends Error {}

/**
 * Another process holds the index in a way SQLite's busy wait does not wait out (a read snapshot that a
 * writer overtook, a log being recovered): worth another try before replaying instead.
 */
export class IndexBusyError extends IndexUnavailableError {}

/** Out of disk space while writing the index: remembered, so that searches do not retry until something changed. */
export class IndexSpaceError extends IndexUnavailableError {}

/**
 * An error that belongs to another store's work (several stores searched at once, each inside its own
 * index's guard): passed on untouched, so that one store's damaged index is never blamed on another's.
 */
export class ForeignError extends Error {
  constructor(readonly inner: unknown) {
    super(inner instanceof Error ? inner.message : String(inner));
  }
}

/** The index holds something other than what convsearch wrote (damage, truncation, tampering): rebuild it. */
export class IndexDamagedError extends Error {}
