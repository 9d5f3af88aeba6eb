// The RFC 9728 metadata routes Switchyards share on one fastify server: who registered which, and whether a host route is in their way.

import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { PRM_WELL_KNOWN } from './prm.js';
import type { MetadataSource } from './wire.js';

/**
 * A routes context's checks of a request head (the transports' `HeadCheck`: transfer coding,
 * Origin and Host, CORS): true when the request goes on to its route, false when answered.
 */
export type MetadataHeadCheck = (req: FastifyRequest, reply: FastifyReply) => boolean;

/** The Switchyards whose metadata routes one fastify server serves, in registration order. */
export interface SharedMetadata {
  /** Each one's metadata source and head check. */
  readonly joined: Array<{ current: MetadataSource; headCheck: MetadataHeadCheck | undefined }>;
  /** True once an OPTIONS route is registered on the metadata paths (one of them has CORS). */
  options: boolean;
}

/**
 * The metadata sources of every Switchyard whose routes are registered on one fastify server
 * (keyed by `app.server`, which every encapsulated context shares): fastify's router is one per
 * server, so the first registration's routes serve them all, and later ones only join the list.
 * Weak: a server that is gone takes its entry with it.
 */
export const sourcesByServer = new WeakMap<object, SharedMetadata>();

/** The URLs the metadata routes are registered at: the bare well-known path and every path below it. */
export const METADATA_ROUTE_URLS: readonly string[] = [PRM_WELL_KNOWN, `${PRM_WELL_KNOWN}/*`];

/** The methods the metadata routes take besides OPTIONS (HEAD comes with GET). */
const METADATA_METHODS: readonly HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/**
 * The metadata route URL at which a route that is not a Switchyard's is in the way of the
 * metadata routes a Switchyard registering now on `app`'s server would add, or undefined. The
 * first on a server adds GET (and HEAD), POST, PUT, DELETE and PATCH on both
 * {@link METADATA_ROUTE_URLS}, and OPTIONS with `preflight` (CORS on); a later one adds only
 * OPTIONS, with `preflight` when none before it had CORS: anything else is there already and is a
 * Switchyard's ({@link sourcesByServer} records what each registered), so it is shared, not taken.
 * A route at a single path below the well-known one (`/.well-known/oauth-protected-resource/x`)
 * is another route to fastify, and not in the way.
 * @see fastify docs/Reference/Routes.md (one router per server: a second route with the same
 *   method and URL is FST_ERR_DUPLICATED_ROUTE)
 */
export function metadataRouteTaken(app: Pick<FastifyInstance, 'hasRoute' | 'server'>, o: { preflight: boolean }): string | undefined {
  const shared = sourcesByServer.get(app.server);
  const methods: readonly HTTPMethods[] =
    shared === undefined ? [...METADATA_METHODS, ...(o.preflight ? (['OPTIONS'] as const) : [])] : o.preflight && !shared.options ? ['OPTIONS'] : [];
  return METADATA_ROUTE_URLS.find((url) => methods.some((method) => app.hasRoute({ url, method })));
}
