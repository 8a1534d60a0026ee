#!/usr/bin/env node
// The `postback` binary. Runs the built CLI; in this repository, `npm ci` builds it (root `prepare`).
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));
