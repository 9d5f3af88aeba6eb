// Test helper: a library gateway with a logger that keeps records, requests built the way the
// dialect tests send them, and the first diagnostics message that matches.

import diagnostics from 'node:diagnostics_channel';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createSwitchyard, type Switchyard, type SwitchyardConfig, type SwitchyardOptions } from '../../src/index.js';
import { modernBody, modernHeaders } from './http.js';

/** A library gateway plus the log records it wrote; closed by `t.after`. */
export function switchyard(
  t: { after(fn: () => Promise<void>): void },
  config: SwitchyardConfig = {},
  opts: SwitchyardOptions = {},
): Switchyard & { records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const sy = createSwitchyard(config, { log: pino({ level: 'debug' }, sink), ...opts });
  t.after(() => sy.close());
  return Object.assign(sy, { records });
}

/** A 2026-07-28 POST of `method` as a web Request to `url` (default the demo's `/mcp`). */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  opts: { name?: string; url?: string; id?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Request {
  return new Request(opts.url ?? 'http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { ...modernHeaders(method, opts.name), ...opts.headers },
    body: JSON.stringify(modernBody(opts.id ?? 1, method, params)),
    signal: opts.signal,
  });
}

/**
 * The first message published on channel `name` that `match` accepts, from now on (subscribe
 * before causing it). The subscription ends with the message, or at teardown.
 */
export function firstOn<T>(t: { after(fn: () => void): void }, name: string, match: (m: T) => boolean = () => true): Promise<T> {
  return new Promise<T>((resolve) => {
    const fn = (m: unknown) => {
      if (!match(m as T)) return;
      diagnostics.unsubscribe(name, fn);
      resolve(m as T);
    };
    diagnostics.subscribe(name, fn);
    t.after(() => void diagnostics.unsubscribe(name, fn));
  });
}

/** Every message published on channel `name` from now on, until teardown. */
export function allOn<T>(t: { after(fn: () => void): void }, name: string): T[] {
  const seen: T[] = [];
  const fn = (m: unknown) => void seen.push(m as T);
  diagnostics.subscribe(name, fn);
  t.after(() => void diagnostics.unsubscribe(name, fn));
  return seen;
}
