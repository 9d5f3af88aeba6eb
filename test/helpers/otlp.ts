// Test helper: an OTLP/HTTP receiver on 127.0.0.1 that keeps every JSON trace export, as a
// collector would take it (closed at teardown).

import http from 'node:http';

/** One span as OTLP/HTTP JSON carries it (ids as lower-case hex). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
  /** W3C trace flags in the low byte; 0x100: whether the parent is remote is known, 0x200: it is. */
  flags?: number;
}

/** A running receiver. */
export interface Receiver {
  /** Base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: unknown }>;
  spans(): OtlpSpan[];
  resourceAttributes(): Record<string, unknown>;
  /** Resolves with the spans named `name` once at least `count` of them arrived. */
  named(name: string, count: number): Promise<OtlpSpan[]>;
}

/** A node:http server on 127.0.0.1:0 that accepts OTLP/HTTP JSON trace exports. */
export async function receiver(t: { after(fn: () => Promise<void> | void): void }): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  type Body = { resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }> }> };
  const spans = () => requests.flatMap((r) => (r.body as Body).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    resourceAttributes: () => attrs((requests[0].body as Body).resourceSpans[0].resource.attributes),
    named: (name, count) =>
      new Promise((resolve) => {
        const check = () => {
          const hits = spans().filter((s) => s.name === name);
          if (hits.length < count) return;
          waiters.delete(check);
          resolve(hits);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** OTLP attributes as a plain object of their values. */
export function attrs(list: OtlpSpan['attributes']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list) out[a.key] = Object.values(a.value)[0];
  return out;
}
