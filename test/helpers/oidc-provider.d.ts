// Type declarations for the parts of oidc-provider (ships no types) that the test authorization server uses.

declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** The koa-style context oidc-provider hands to grant handlers and hooks. */
  export interface OidcContext {
    oidc: {
      params: Record<string, string | string[] | undefined>;
      client: { clientId: string; grantTypeAllowed(type: string): boolean };
      provider: Provider;
    };
    body: unknown;
  }

  /** One issued token model instance (AccessToken, ClientCredentials). */
  export interface TokenModel {
    scope?: string;
    extra?: Record<string, unknown>;
    resourceServer?: unknown;
    expiration: number;
    clientId?: string;
    save(): Promise<string>;
  }

  /** A grant under construction (consent). */
  export interface GrantModel {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  /** What interactionDetails returns. */
  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId: string };
    grantId?: string;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    registerGrantType(name: string, handler: (ctx: OidcContext) => Promise<void>, params?: string[] | Set<string>, dupes?: string[] | Set<string>): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    ClientCredentials: new (init: { client: unknown; scope?: string }) => TokenModel;
    AccessToken: { find(value: string): Promise<TokenModel | undefined> };
    Grant: {
      new (init: { accountId: string; clientId: string }): GrantModel;
      find(id: string): Promise<GrantModel | undefined>;
    };
  }

  export const errors: {
    InvalidRequest: new (description?: string) => Error;
    InvalidGrant: new (description?: string) => Error;
    InvalidTarget: new (description?: string) => Error;
  };

  export default Provider;
}

declare module 'oidc-provider/lib/helpers/resource_server.js' {
  /** oidc-provider's resource server record (what getResourceServerInfo resolves to). */
  export default class ResourceServer {
    constructor(identifier: string, data: Record<string, unknown>);
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  /** oidc-provider's in-memory adapter; `store` is an LRU from lib/helpers/lru.js. */
  export default class MemoryAdapter {
    constructor(model: string, store?: unknown, clockTolerance?: number);
  }
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  /** oidc-provider's bounded LRU map. */
  export default class LRU {
    constructor(opts: { maxSize: number });
  }
}
