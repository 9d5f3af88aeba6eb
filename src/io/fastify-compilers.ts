// fastify's schema compilers, loaded when a route first has a schema rather than when a server is made.

import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** Resolves as fastify does: its compilers are its dependencies, not ours. */
const requireAsFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

/** A compilers factory (`() => build`) whose module is required at the first build, not before. */
function deferred<F extends (...args: never[]) => unknown>(module: string): F {
  let build: F | undefined;
  return ((...args: Parameters<F>) => (build ??= (requireAsFastify(module) as () => F)())(...args)) as F;
}

/**
 * The `schemaController` option for a fastify server of ours: fastify's own compilers
 * (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler, the same ones fastify would
 * pick), but loaded at the first route that has a schema. Our routes have none, and fastify
 * otherwise requires both, with ajv, its JTD build and fast-json-stringify, whenever a server is
 * made: about 25 ms of every start (bench/startup.mjs). A host that adds a route with a schema to
 * our server still gets them. @see https://fastify.dev/docs/latest/Reference/Server/#schemacontroller
 */
export function deferredSchemaCompilers(): NonNullable<FastifyServerOptions['schemaController']> {
  return {
    compilersFactory: {
      buildValidator: deferred('@fastify/ajv-compiler'),
      buildSerializer: deferred('@fastify/fast-json-stringify-compiler'),
    },
  };
}
