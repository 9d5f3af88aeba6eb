// Recurring log messages, kept constant so that they can be searched and counted.

/** Log message texts; fields carry the variable parts. */
export const Lines = {
  listening: 'listening',
  shuttingDown: 'shutting down',
  stopped: 'stopped',
  startFailed: 'start failed',
  clientFault: 'request refused',
  internalFault: 'internal error',
  hostIdentityInvalid: 'the host application passed an invalid identity',
  interceptorSpread: 'an interceptor passed on a context without its signal: derive it with deriveContext(ctx, patch), not a spread',
  hostBodyRead: 'the host application read the request body before handle()',
  hostHookFault: 'a hook of the host application threw',
  hostInterceptorResult: 'an interceptor of the host application returned a result that is not a JSON object',
  hostIdentityFault: 'the identity() of the host application threw',
  upstreamReady: 'upstream ready',
  upstreamExit: 'upstream exited',
  upstreamRestart: 'upstream restarting',
  upstreamStderr: 'upstream stderr',
  upstreamBadMessage: 'upstream sent an invalid message',
  upstreamUnroutable: 'upstream message has no client',
  sessionOpen: 'session opened',
  sessionClose: 'session closed',
  slowClientCut: 'slow client cut',
  connectionClosed: 'connection closed by the guard',
  adminConnectionRefused: 'admin connection refused',
  descriptorLimit: 'maxConnections is above the open-file limit',
} as const;
