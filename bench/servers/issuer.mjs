// A minimal OAuth authorization server for the bench's authentication row: RFC 8414 metadata and
// a JWKS on 127.0.0.1, and RS256 access tokens for any audience at GET /token?aud=URI[&sub=SUBJECT]
// (subject `bench-client` unless named; bench only: it asks for no client authentication). Prints its issuer URL on stdout when listening.
// Usage: node issuer.mjs PORT
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// jose is the project's own dependency: load it from the repository root.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { SignJWT, exportJWK, generateKeyPair } = await import(createRequire(join(root, 'package.json')).resolve('jose'));

const [portText] = process.argv.slice(2);
const port = Number(portText);
const issuer = `http://127.0.0.1:${port}`;
const { publicKey, privateKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
/** A token for `audience` and `subject`, valid two hours. */
const tokenFor = (audience, subject = 'bench-client') =>
  new SignJWT({ scope: 'mcp', client_id: 'bench' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
    .setIssuer(issuer)
    .setSubject(subject)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);

const docs = {
  '/.well-known/oauth-authorization-server': { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] },
  '/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/jwks` },
  '/jwks': { keys: [jwk] },
};
const http = createServer((req, res) => {
  const url = new URL(req.url ?? '/', issuer);
  if (url.pathname === '/token' && url.searchParams.has('aud')) {
    void tokenFor(url.searchParams.get('aud'), url.searchParams.get('sub') ?? undefined).then((token) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer' }));
    });
    return;
  }
  const doc = docs[url.pathname];
  res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(doc ?? { error: 'not_found' }));
});
http.listen(port, '127.0.0.1', () => process.stdout.write(`${issuer}\n`));
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));
