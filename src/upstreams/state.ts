// Upstream lifecycle on the diagnostics channels (switchyard:upstream:spawn|ready|down), for
// metrics and status pages.

import { channels, type UpstreamStateMessage } from '../core/diagnostics.js';

/** Publishes an upstream state change when anyone listens (free otherwise). */
export function publishState(msg: UpstreamStateMessage): void {
  const ch = msg.state === 'spawn' ? channels.upstreamSpawn : msg.state === 'ready' ? channels.upstreamReady : channels.upstreamDown;
  if (ch.hasSubscribers) ch.publish(msg);
}
