// Found by a trial as an embedding developer: a TypeScript project with `exactOptionalPropertyTypes`
// (a flag `strict` leaves out, and many strict projects turn on) and `skipLibCheck: false` could not
// compile against the package: dist/src/core/interceptor.d.ts failed, `Class 'ContextFields'
// incorrectly implements interface 'RequestContext'` (its `mount`, typed `string | undefined`, for
// an optional `mount?: string`). Now the shipped declarations check under every strict-family flag.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { typecheckConsumer } from '../helpers/consumer-types.js';

/** A consumer that touches each entry point's types: the interceptor's context included. */
const CONSUMER = `import http from 'node:http';
import Fastify from 'fastify';
import { createSwitchyard, deriveContext, hostIdentity, type Interceptor, type SwitchyardConfig } from 'switchyard';

const config: SwitchyardConfig = { upstreams: { fs: { command: 'node', args: ['server.js'] } } };
const audit: Interceptor = (next) => (ctx) => next(deriveContext(ctx, { params: { ...ctx.params } }));
const sy = createSwitchyard(config, { interceptors: [audit] });
const app = Fastify();
await app.register(sy.plugin, { identity: (request) => (request.headers['x-user'] ? hostIdentity('pat') : null) });
http.createServer((req, res) => void sy.handle(req, res, { identity: null }));
const res: Response = await sy.fetch(new Request('http://localhost/mcp'), { identity: hostIdentity('pat', { scopes: ['tools'] }) });
void res;
await sy.close();
`;

test('a strict consumer with exactOptionalPropertyTypes and skipLibCheck: false type-checks against the declarations', { timeout: 120_000 }, async (t) => {
  const ours = await typecheckConsumer(t, {
    source: CONSUMER,
    packages: ['fastify'],
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noPropertyAccessFromIndexSignature: true,
      noImplicitOverride: true,
      noImplicitReturns: true,
      verbatimModuleSyntax: true,
      skipLibCheck: false,
    },
  });
  assert.deepEqual(ours, [], 'the consumer type-checks against the shipped declarations');
});
