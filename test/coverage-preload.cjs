// Test preload (`node --require`, from `npm test`): makes V8 coverage cheaper in every Node process
// of the suite without changing what it measures.
//
// While NODE_V8_COVERAGE is set, Node reads and parses the source map of every module it loads
// (about 900 in a test process, 770 of them in node_modules) and writes them all beside the
// coverage at exit: about 0.18 CPU s and 4 MB a process, measured on a process that loads the
// official clients, fastify and undici (1.16 → 0.98 CPU s; 5.3 → 1.4 MB). c8 needs none of them: it
// reads the maps of the files it reports (dist/ beside src/) from disk. Node decides at each module
// load from `process.env.NODE_V8_COVERAGE`, while the coverage itself was started at the process's
// start and is written at its exit whatever the variable says later. So this preload removes the
// variable, and takes over the one other thing Node does with it: handing it to every child.
//
// A child started with `spawn`, `execFile`, `exec` or `fork` (which all end in
// `ChildProcess.prototype.spawn`) gets NODE_V8_COVERAGE and this preload in NODE_OPTIONS, unless its
// environment names NODE_V8_COVERAGE (NO_COVERAGE_ENV in test/helpers/gateway.ts names it empty) or
// it runs none of Switchyard's code: a Node program whose script is in node_modules
// (server-everything, mcp-remote, npm) or one of the plain fixtures in test/fixtures/ (the compiled
// ones, under dist/, are covered). A `spawnSync`, `execSync` or `execFileSync` child gets the
// variable as Node would hand it (set around the call) and collects as before.
'use strict';
const childProcess = require('node:child_process');
const { syncBuiltinESMExports } = require('node:module');
const path = require('node:path');

const { ChildProcess } = childProcess;

const LOADED = Symbol.for('switchyard.test.coveragePreload');
const dir = process.env.NODE_V8_COVERAGE;

if (dir && !globalThis[LOADED]) {
  globalThis[LOADED] = true;
  const root = path.resolve(__dirname, '..');
  const plainFixtures = path.join(root, 'test', 'fixtures') + path.sep;
  // A CommonJS preload (`--require`), not `--import`: with `--import` Node 20 runs the child's main
  // script through the ES module loader, which changes what a CommonJS script's failures print.
  const preloadFlag = `--require ${JSON.stringify(__filename)}`;
  // Node options whose value is the next argument: the script comes after them.
  const takesValue = new Set([
    '-r',
    '--require',
    '--import',
    '--loader',
    '--experimental-loader',
    '-C',
    '--conditions',
    '--env-file',
    '--input-type',
    '--title',
  ]);

  /** The script a Node command line runs, or undefined (another program, `-e`, a REPL). */
  const scriptOf = (file, args, cwd) => {
    if (file !== process.execPath && path.basename(file) !== 'node') return undefined;
    for (let i = 1; i < args.length; i++) {
      const a = args[i];
      if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') return undefined;
      if (takesValue.has(a)) i++;
      else if (!a.startsWith('-')) return path.resolve(cwd ?? process.cwd(), a);
    }
    return undefined;
  };
  const runsNoneOfOurs = (script) => script !== undefined && (script.includes(`${path.sep}node_modules${path.sep}`) || script.startsWith(plainFixtures));

  delete process.env.NODE_V8_COVERAGE;

  const spawn = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function spawnCovered(options) {
    if (!Array.isArray(options?.envPairs)) {
      throw new Error('test/coverage-preload.cjs: ChildProcess.prototype.spawn no longer takes envPairs; update the preload');
    }
    const pairs = options.envPairs;
    if (!pairs.some((p) => p.startsWith('NODE_V8_COVERAGE=')) && !runsNoneOfOurs(scriptOf(options.file, options.args ?? [], options.cwd))) {
      const at = pairs.findIndex((p) => p.startsWith('NODE_OPTIONS='));
      const withPreload = [...pairs, `NODE_V8_COVERAGE=${dir}`];
      if (at === -1) withPreload.push(`NODE_OPTIONS=${preloadFlag}`);
      else if (!pairs[at].includes(preloadFlag)) withPreload[at] = `${pairs[at]} ${preloadFlag}`;
      options.envPairs = withPreload;
    }
    return spawn.call(this, options);
  };

  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const original = childProcess[name];
    childProcess[name] = function syncCovered(...args) {
      process.env.NODE_V8_COVERAGE = dir;
      try {
        return original.apply(this, args);
      } finally {
        delete process.env.NODE_V8_COVERAGE;
      }
    };
  }
  syncBuiltinESMExports();
}
