// The authentication building blocks as one import for the composition root: inbound resource-server checks and outbound upstream credentials.

export { createAuthenticator, type Authenticator, type AuthenticatorDeps, type HeaderSource, type ResourceRef } from './authenticate.js';
export {
  createBearerVerifier,
  looksLikeJwt,
  tokenHash,
  JWKS_COOLDOWN_MS,
  VERIFIED_JWT_CACHE_ENTRIES,
  VERIFIED_JWT_TTL_MS,
  type BearerVerifier,
  type BearerVerifierDeps,
} from './bearer.js';
export { createApiKeyStore, hashApiKey, API_KEY_ISSUER, type ApiKeyStore } from './api-keys.js';
export { compileScopeHierarchy, NO_SCOPE_HIERARCHY, type ScopeHierarchy } from './scopes.js';
export {
  parseAuthorization,
  buildChallenge,
  challengeError,
  withChallenge,
  quoteString,
  MAX_TOKEN_CHARS,
  CHALLENGE_CODES,
  type ChallengeParams,
  type BearerErrorCode,
} from './challenge.js';
export { prmPath, prmUrl, prmDocument, canonicalResource, PRM_WELL_KNOWN, type PrmInput, type ProtectedResourceMetadata } from './prm.js';
export {
  createTokenSource,
  REFRESH_MARGIN_MS,
  DEFAULT_TOKEN_LIFETIME_SEC,
  type TokenSource,
  type TokenSourceDeps,
  type InboundCredential,
} from './outbound.js';
export { metadataUrls, DISCOVERY_RETRY_SEC, type AuthorizationServerMetadata } from './discovery.js';
export {
  AUTH_SCHEMA,
  OUTBOUND_SCHEMA,
  ASYMMETRIC_ALGORITHMS,
  resolveAuthConfig,
  resolveBearerConfig,
  resolveOutboundConfig,
  type AuthConfig,
  type BearerConfig,
  type IntrospectionConfig,
  type ApiKeyConfig,
  type StdioIdentityConfig,
  type OutboundConfig,
  type ClientCredentialsConfig,
  type TokenExchangeConfig,
} from './config.js';
export {
  createFrontDoorAuth,
  createUpstreamCredentials,
  rawHeaderSource,
  warnTokenPassthrough,
  FORWARD_AUTHORIZATION_WARNING,
  type CredentialRef,
  type FrontDoorAuth,
  type FrontDoorAuthOptions,
  type UpstreamCredentials,
} from './wire.js';
export { checkOpenListener, httpAuthOf, type AuthMount } from './open-listener.js';
export { localIdentity } from './stdio-identity.js';
