import type { StoreReader, StoreShare } from './reader.js';
import { openSharedSqliteReader, SQLITE_BACKEND } from './sqlite/reader.js';

/** In a worker thread: opens the very bytes another thread's reader shared (`StoreReader.share()`). */
export function openSharedReader(share: StoreShare): StoreReader {
  if (share.backend === SQLITE_BACKEND) return openSharedSqliteReader(share);
  throw new Error(`no reader for shared ${share.backend} stores`);
}
