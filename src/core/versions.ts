// Protocol revisions Switchyard knows, and which era each belongs to.

/** The stateless revision (2026-07-28 basic/versioning). */
export const STATELESS_REVISION = '2026-07-28';

/** Revisions served over Streamable HTTP with initialize and sessions, newest first. */
export const STREAMABLE_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** The HTTP+SSE revision (2024-11-05 basic/transports). */
export const HTTP_SSE_REVISION = '2024-11-05';

/** Every revision an initialize-era session may negotiate, newest first. */
export const INITIALIZE_REVISIONS = [...STREAMABLE_REVISIONS, HTTP_SSE_REVISION] as const;

/** A `YYYY-MM-DD` revision string. */
export type Revision = string;

/** True when `v` is one of the initialize-era revisions (2024-11-05 … 2025-11-25). */
export function isInitializeRevision(v: unknown): v is Revision {
  return typeof v === 'string' && (INITIALIZE_REVISIONS as readonly string[]).includes(v);
}

/** True when `a` is the same revision as `b` or later (ISO dates compare as strings). */
export function atLeast(a: Revision, b: Revision): boolean {
  return a >= b;
}
