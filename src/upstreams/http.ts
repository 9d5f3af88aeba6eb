// Kept so that existing `upstreams/http.js` imports (the CLI's `HttpEra`) resolve: the HTTP
// upstream lives in src/upstreams/http/, one file per era.

export { createHttpUpstream, type HttpEra, type HttpUpstream, type HttpUpstreamOptions } from './http/index.js';
