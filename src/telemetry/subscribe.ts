// One way for observers to subscribe to the diagnostics channels: typed handlers, none of which
// may throw into the publisher, and one call that unsubscribes them all.

import diagnostics from 'node:diagnostics_channel';
import {
  CHANNELS,
  type RefusalMessage,
  type RequestEndMessage,
  type RequestStartMessage,
  type SessionMessage,
  type StreamDropMessage,
  type StreamMessage,
  type UpstreamCallMessage,
  type UpstreamFaultMessage,
  type UpstreamStateMessage,
} from '../core/diagnostics.js';

/**
 * What the `reload` channel carries. src/core/diagnostics.ts names the channel but no shape; the
 * observers read this one: `ok` true for a reload that took effect, false (or an `error`) for one
 * that was refused and left the running config in place.
 */
export interface ReloadMessage {
  ok?: boolean;
  error?: unknown;
  /** With `ok`: upstreams whose new settings did not start, kept as they ran (ReloadReport.kept); absent when none. */
  kept?: readonly string[];
}

/** The message each channel carries, by channel key. */
export interface ChannelMessages {
  requestStart: RequestStartMessage;
  requestEnd: RequestEndMessage;
  upstreamCallStart: UpstreamCallMessage;
  upstreamCallEnd: UpstreamCallMessage;
  upstreamSpawn: UpstreamStateMessage;
  upstreamReady: UpstreamStateMessage;
  upstreamDown: UpstreamStateMessage;
  sessionOpen: SessionMessage;
  sessionClose: SessionMessage;
  streamOpen: StreamMessage;
  streamClose: StreamMessage;
  streamDrop: StreamDropMessage;
  refusal: RefusalMessage;
  upstreamFault: UpstreamFaultMessage;
  reload: ReloadMessage;
}

/** Handlers by channel key; each runs synchronously inside `publish`. */
export type ChannelHandlers = { [K in keyof ChannelMessages]?: (message: ChannelMessages[K]) => void };

/**
 * Subscribes `handlers` and returns the function that unsubscribes them. A handler that throws
 * is caught and reported to `onError`: diagnostics_channel would otherwise re-raise it as an
 * uncaught exception in the publishing request.
 * @see Node.js diagnostics_channel, `diagnostics_channel.subscribe(name, onMessage)`
 */
export function subscribeChannels(handlers: ChannelHandlers, onError: (err: unknown, channel: string) => void): () => void {
  const subs: Array<[string, (message: unknown, name: string | symbol) => void]> = [];
  for (const key of Object.keys(handlers) as Array<keyof ChannelMessages>) {
    const handler = handlers[key] as ((m: unknown) => void) | undefined;
    if (!handler) continue;
    const name = CHANNELS[key];
    const fn = (message: unknown) => {
      try {
        handler(message);
      } catch (err) {
        try {
          onError(err, name);
        } catch {
          // The error reporter itself failed; nothing more can be done without hurting the publisher.
        }
      }
    };
    diagnostics.subscribe(name, fn);
    subs.push([name, fn]);
  }
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    for (const [name, fn] of subs) diagnostics.unsubscribe(name, fn);
  };
}
