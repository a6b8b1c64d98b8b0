#!/usr/bin/env node
// The meshsnap command. The implementation is compiled TypeScript (npm run build).
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
