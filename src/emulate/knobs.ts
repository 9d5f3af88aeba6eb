// The knobs `switchyard emulate` takes (docs/testing-clients.md), apart from the emulator itself:
// the CLI parses its flags against these without loading the emulator, which loads the gateway
// (fastify and every front door) — a usage error or `--help` should not.

/** The eras `emulate` can be. */
export const EMULATED_ERAS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type EmulatedEra = (typeof EMULATED_ERAS)[number];

/** Statuses `--probe-status` can answer the first POST with. */
export const PROBE_STATUSES = [400, 401, 403, 404, 405, 406, 415, 500, 503] as const;
export type ProbeStatus = (typeof PROBE_STATUSES)[number];

/** Body shapes for the `--probe-status` answer. */
export const PROBE_BODIES = ['json', 'empty', 'html'] as const;
export type ProbeBody = (typeof PROBE_BODIES)[number];

/** How the `endpoint` event names the POST URI. */
export const ENDPOINT_MODES = ['relative', 'absolute', 'cross-origin', 'path-prefix'] as const;
export type EndpointMode = (typeof ENDPOINT_MODES)[number];

/** Statuses an accepted POST without a reply can get. */
export const POST_STATUSES = [202, 200, 204] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/** The prefix `--endpoint path-prefix` puts before the message path. */
export const PATH_PREFIX = '/prefix';
