#!/usr/bin/env node
// the bundle (npm run build: tsc, then scripts/bundle.mjs): one file to load instead of ~90 modules
import { main } from '../dist/bundle/convsearch.js';

await main(process.argv);
