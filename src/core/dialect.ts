// A client-facing dialect as the HTTP front door holds it: an era's HTTP binding for one mount.

import type { HttpExchange } from './exchange.js';

/** An era's HTTP binding, built per mount (dialects/<era>/http.ts). */
export interface Dialect {
  /** Folder name, e.g. `2026-07-28`. */
  readonly id: string;
  /** Revisions it serves. */
  readonly revisions: readonly string[];
  /** Handles one exchange; must answer it exactly once and never throw. */
  handle(ex: HttpExchange): Promise<void>;
  /** Ends every session and stream (shutdown). */
  close(): Promise<void>;
  /** Live sessions (0 for stateless dialects). */
  readonly sessionCount: number;
  /** Open streams (GET, listen, HTTP+SSE). */
  streamCount(): number;
  /** True when `id` names one of this dialect's live sessions. */
  hasSession(id: string): boolean;
}
