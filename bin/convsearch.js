#!/usr/bin/env node
// the bundle (npm run build: tsc, then scripts/bundle.mjs): one file to load instead of ~90 modules
import { createRequire } from 'node:module';

const { main } = createRequire(import.meta.url)('../dist/bundle/convsearch.cjs');
await main(process.argv);
