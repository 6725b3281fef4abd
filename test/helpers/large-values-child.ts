/**
 * Reads every snapshot of run `long` of the store at argv[2] through the SQLite reader, and prints the
 * minor page faults that took (large-values.test.ts).
 */
import { openSqliteReader } from '../../src/store/sqlite/reader.js';

const reader = openSqliteReader(process.argv[2]!);
const before = process.resourceUsage().minorPageFault;
let chars = 0;
for (const s of reader.completeSnapshots('long')) chars += String(s.messages).length;
const faults = process.resourceUsage().minorPageFault - before;
reader.close();
process.stdout.write(JSON.stringify({ faults, chars }));
