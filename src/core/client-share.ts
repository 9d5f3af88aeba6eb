// Per-client shares of long-lived places (sessions, listen streams): one client cannot take them all.

import { principalKey, type Identity } from './identity.js';

/**
 * The client a long-lived place is counted against: the verified principal (`p:` + its
 * `principalKey`) when the request has an identity, else the remote address as the front door
 * sees it (`a:` + the address, behind trusted proxies the first untrusted `X-Forwarded-For` hop;
 * `::ffff:10.0.0.1` is `10.0.0.1`). Undefined, counted against no one, for the stdio client
 * (identity source `local`, the only client there) and where neither is known (the fetch handler
 * without an identity).
 * @param identity the verified caller, or null
 * @param address the remote address (IPv4 or IPv6 text), if known
 */
export function clientKey(identity: Identity | null, address: string | undefined): string | undefined {
  if (identity !== null) return identity.source === 'local' ? undefined : `p:${principalKey(identity)}`;
  if (address === undefined || address === '') return undefined;
  return `a:${address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address}`;
}

/**
 * Counts the places each client holds under one bound (`maxSessionsPerClient`,
 * `maxSubscriptionsPerClient`). An entry lives while its client holds a place (deleted at zero),
 * so the map never holds more entries than the places it counts, which their own bound caps.
 */
export class ClientShares {
  private readonly held = new Map<string, number>();

  /** @param max places one client may hold at once. */
  constructor(readonly max: number) {}

  /**
   * Takes one of `client`'s places. True when taken or not counted (`client` undefined); false
   * when the client already holds `max`: nothing is taken then.
   */
  take(client: string | undefined): boolean {
    if (client === undefined) return true;
    const n = this.held.get(client) ?? 0;
    if (n >= this.max) return false;
    this.held.set(client, n + 1);
    return true;
  }

  /** Gives back one place {@link take} took (nothing for `undefined`). */
  release(client: string | undefined): void {
    if (client === undefined) return;
    const n = (this.held.get(client) ?? 1) - 1;
    if (n <= 0) this.held.delete(client);
    else this.held.set(client, n);
  }

  /**
   * True when `client` holds `max` places already (its next {@link take} would fail); false for
   * a client counted against no one. For a check made before the place is taken, as when other
   * refusals come between.
   */
  full(client: string | undefined): boolean {
    return client !== undefined && this.holding(client) >= this.max;
  }

  /** Places `client` holds now. */
  holding(client: string): number {
    return this.held.get(client) ?? 0;
  }

  /** Clients holding at least one place. */
  get clients(): number {
    return this.held.size;
  }
}
