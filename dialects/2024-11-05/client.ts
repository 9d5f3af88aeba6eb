// The 2024-11-05 HTTP+SSE client side: the initialize-era vocabulary (handed in, so that this
// era module imports only the core) with this transport's rules: offer 2024-11-05, no session
// headers, and where the `endpoint` event may send us.

import type { EndpointVerdict, HttpSseEraClient, OutboundMessage, SessionEraClient } from '../../src/core/era.js';
import type { JsonObject } from '../../src/core/message.js';
import type { Implementation } from '../../src/core/request.js';

/** The revision of the HTTP+SSE transport. */
const REVISION = '2024-11-05';

/**
 * The HTTP+SSE client over `base`, the initialize-era client. The handshake offers 2024-11-05
 * but accepts any revision `base` speaks (SDK servers over SSE negotiate 2025 revisions too);
 * nothing identifies the session but the endpoint URL the stream names.
 * @see 2024-11-05 basic/transports (HTTP with SSE); 2025-03-26 basic/transports#backwards-compatibility
 */
export function createHttpSseClient(base: SessionEraClient): HttpSseEraClient {
  return {
    ...base,
    initialize(o: { revision?: string; capabilities: JsonObject; clientInfo: Implementation }): OutboundMessage {
      return base.initialize({ ...o, revision: o.revision ?? REVISION });
    },
    // The session is the stream: its id travels in the endpoint URL, no header names it.
    sessionHeaders: () => ({}),
    endpoint(data: string, streamUrl: string): EndpointVerdict {
      let url: URL;
      try {
        // The SDK convention: the event's data is a URI reference, resolved against the stream URL.
        url = new URL(data.trim(), streamUrl);
      } catch {
        return { refused: `endpoint ${JSON.stringify(data.slice(0, 200))} is not a URL` };
      }
      // An endpoint on another origin would send our messages (and headers) to a third party.
      if (url.origin !== new URL(streamUrl).origin) return { refused: `endpoint ${url.href} is on another origin: refused` };
      return { url: url.href };
    },
  };
}
