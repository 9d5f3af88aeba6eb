// Preloaded (--require) into peers that bind all interfaces by default: a listen() on a TCP
// port with no host, '::' or '0.0.0.0' binds 127.0.0.1 instead. Unix sockets pass through.
'use strict';
const net = require('node:net');
const LOOPBACK = '127.0.0.1';
const wide = (h) => h === undefined || h === null || h === '' || h === '::' || h === '0.0.0.0' || h === '::0';
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const rest = args.slice(1);
    if (typeof rest[0] === 'string' || rest[0] === null || rest[0] === undefined) {
      if (wide(rest[0])) rest[0] = LOOPBACK;
      if (rest.length === 0) rest.push(LOOPBACK);
      return orig.call(this, Number(first), ...rest);
    }
    return orig.call(this, Number(first), LOOPBACK, ...rest);
  }
  if (first && typeof first === 'object' && !first.path && !first.fd && !first.handle && !(first instanceof net.Server)) {
    if (wide(first.host)) return orig.call(this, { ...first, host: LOOPBACK, ipv6Only: false }, ...args.slice(1));
  }
  if (first === undefined || typeof first === 'function') return orig.call(this, 0, LOOPBACK, ...args);
  return orig.apply(this, args);
};
