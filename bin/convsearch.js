#!/usr/bin/env node
// A server store's driver thread starts first, so its start overlaps with loading the program.
import { prestartDrivers } from '../dist/src/store/prestart.js';

prestartDrivers(process.argv.slice(2), process.env.CONVSEARCH_DB);
const { main } = await import('../dist/src/cli/main.js');
await main(process.argv);
