import type { HelperPolicy } from '../../src/store/sqlite/pages.js';

/** No helper thread: this thread hashes every page of the file. */
export const ALONE: HelperPolicy = { bytes: Infinity, spare: () => false };

/** A helper thread shares the pass over any file, whatever the machine's cores and load. */
export const SHARED: HelperPolicy = { bytes: 0, spare: () => true };
