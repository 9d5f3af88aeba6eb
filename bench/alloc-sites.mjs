#!/usr/bin/env node
// Where a sampling heap profile's bytes were allocated: self bytes by function (name, file and
// line) or by file, largest first, as bytes per request when `--requests N` says how many the
// window served. Reads the .heapprofile that bench/lib/alloc-preload.cjs writes (the samples of
// collected objects included), or Chrome DevTools' own.
//
//   node bench/alloc-sites.mjs FILE.heapprofile [--requests N] [--top 40] [--by function|file]

import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const file = argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
if (!file) throw new Error('usage: node bench/alloc-sites.mjs FILE.heapprofile [--requests N] [--top 40] [--by function|file]');
const requests = Number(opt('--requests', 0));
const top = Number(opt('--top', 40));
const by = opt('--by', 'function');
const { head } = JSON.parse(readFileSync(file, 'utf8'));

const sums = new Map();
let total = 0;
(function walk(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/dist\//, '');
  const key = by === 'file' ? where || '(native)' : `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  const self = node.selfSize;
  if (self) {
    sums.set(key, (sums.get(key) ?? 0) + self);
    total += self;
  }
  for (const c of node.children) walk(c);
})(head);
const per = (b) => (requests ? `${(b / requests).toFixed(0).padStart(7)} B/req` : `${b.toString().padStart(10)} B`);
console.log(`${per(total)}  total`);
for (const [k, b] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${per(b)}  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${k}`);
