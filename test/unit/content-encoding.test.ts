// Content-Encoding decoding with real compressed bodies, bombs, corrupt data and unknown codings.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { decodeBody, decodeLoad, parseContentEncoding } from '../../src/transports/content-encoding.js';

const body = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'Grüße 🚀'.repeat(50) } } }),
);
const MiB = 1024 * 1024;

const encoders: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  'deflate-raw': (b) => zlib.deflateRawSync(b),
  br: (b) => zlib.brotliCompressSync(b),
};

/** Asserts that `p` rejects with the catalogue code, HTTP status, JSON-RPC code and headers given. */
async function rejects(p: Promise<unknown>, code: string, status: number, rpc: number, headers?: Record<string, string>): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SwitchyardError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.status, status);
    assert.equal(err.rpcCode, rpc);
    assert.deepEqual(err.headers, headers);
    return true;
  });
}

test('identity: absent, empty, identity and empty list members give the body back as is', async () => {
  for (const ce of [undefined, '', 'identity', 'IDENTITY', ' identity , ', ',']) {
    const out = await decodeBody(body, ce, MiB);
    assert.deepEqual(out, body, String(ce));
  }
  const u8 = new Uint8Array(body);
  assert.deepEqual(await decodeBody(u8, undefined, MiB), body);
});

test('gzip, x-gzip, deflate (zlib and raw) and br decode real compressed bodies, any case', async () => {
  const cases: Array<[string, Buffer]> = [
    ['gzip', encoders.gzip(body)],
    ['x-gzip', encoders.gzip(body)],
    ['GZip', encoders.gzip(body)],
    ['deflate', encoders.deflate(body)],
    ['deflate', encoders['deflate-raw'](body)],
    ['br', encoders.br(body)],
    ['BR', encoders.br(body)],
    ['identity, gzip', encoders.gzip(body)],
  ];
  for (const [ce, bytes] of cases) assert.deepEqual(await decodeBody(bytes, ce, MiB), body, ce);
});

test('a list of codings is undone in reverse order of application (RFC 9110 §8.4)', async () => {
  const twice = encoders.br(encoders.gzip(body));
  assert.deepEqual(await decodeBody(twice, 'gzip, br', MiB), body);
  assert.deepEqual(await decodeBody(twice, 'gzip,br', MiB), body);
  // Named in the wrong order, the first stage meets data it cannot read.
  await rejects(decodeBody(twice, 'br, gzip', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  const four = encoders.deflate(encoders.br(encoders.gzip(encoders.gzip(body))));
  assert.deepEqual(await decodeBody(four, 'gzip, gzip, br, deflate', MiB), body);
});

test('an unknown coding, or more than four, is 415 with Accept-Encoding: gzip, deflate, br', async () => {
  const accept = { 'Accept-Encoding': 'gzip, deflate, br' };
  for (const ce of ['zstd', 'compress', 'x-compress', 'gzip;q=1', 'gzip, zstd', 'chunked', 'gzip br', '*']) {
    await rejects(decodeBody(body, ce, MiB), 'SWY_ERR_HTTP_CONTENT_ENCODING', 415, -32000, accept);
  }
  await rejects(decodeBody(body, 'gzip, gzip, gzip, gzip, gzip', MiB), 'SWY_ERR_HTTP_CONTENT_ENCODING', 415, -32000, accept);
  assert.deepEqual(parseContentEncoding('identity, gzip, identity, br'), ['gzip', 'br']);
  try {
    parseContentEncoding('zstd');
    assert.fail('no throw');
  } catch (err) {
    assert.equal((err as SwitchyardError).message, 'Unsupported Media Type: unsupported Content-Encoding: unknown coding "zstd"');
  }
});

test('a decompression bomb stops at the bound: 413, for each coding and nested', async () => {
  const zeros = Buffer.alloc(64 * MiB);
  const bombs: Array<[string, Buffer]> = [
    ['gzip', zlib.gzipSync(zeros, { level: 9 })],
    ['deflate', zlib.deflateSync(zeros, { level: 9 })],
    ['br', zlib.brotliCompressSync(zeros)],
    ['gzip, gzip', zlib.gzipSync(zlib.gzipSync(zeros, { level: 9 }), { level: 9 })],
  ];
  for (const [ce, bomb] of bombs) {
    assert.ok(bomb.length < 100 * 1024, `${ce} bomb is ${bomb.length} bytes`);
    await rejects(decodeBody(bomb, ce, MiB), 'SWY_ERR_HTTP_BODY_TOO_LARGE', 413, -32600);
  }
});

test('the bound is inclusive: exactly maxDecodedBytes passes, one more byte is 413', async () => {
  const exact = Buffer.alloc(1000, 0x61);
  for (const enc of ['gzip', 'deflate', 'br'] as const) {
    assert.equal((await decodeBody(encoders[enc](exact), enc, 1000)).length, 1000);
    await rejects(decodeBody(encoders[enc](Buffer.alloc(1001, 0x61)), enc, 1000), 'SWY_ERR_HTTP_BODY_TOO_LARGE', 413, -32600);
  }
  assert.equal((await decodeBody(exact, undefined, 1000)).length, 1000);
  await rejects(decodeBody(Buffer.alloc(1001), undefined, 1000), 'SWY_ERR_HTTP_BODY_TOO_LARGE', 413, -32600);
  await rejects(decodeBody(Buffer.alloc(1001), 'identity', 1000), 'SWY_ERR_HTTP_BODY_TOO_LARGE', 413, -32600);
});

test('a plain body labelled gzip, and corrupt, truncated or trailing data, are parse errors (400, -32700)', async () => {
  await rejects(decodeBody(body, 'gzip', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  await rejects(decodeBody(body, 'br', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  await rejects(decodeBody(body, 'deflate', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  await rejects(decodeBody(Buffer.alloc(0), 'gzip', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  const gz = encoders.gzip(body);
  await rejects(decodeBody(gz.subarray(0, gz.length - 10), 'gzip', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  for (const enc of ['gzip', 'deflate', 'deflate-raw', 'br'] as const) {
    const name = enc === 'deflate-raw' ? 'deflate' : enc;
    await rejects(decodeBody(Buffer.concat([encoders[enc](body), Buffer.from('trailing')]), name, MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  }
  await assert.rejects(decodeBody(Buffer.concat([encoders.br(body), Buffer.from('x')]), 'br', MiB), {
    message: 'Parse error: invalid JSON: br data followed by other bytes',
  });
  // Two gzip members are one gzip body (RFC 1952 §2.2).
  assert.deepEqual(await decodeBody(Buffer.concat([encoders.gzip(body.subarray(0, 10)), encoders.gzip(body.subarray(10))]), 'gzip', MiB), body);
  const flipped = Buffer.from(gz);
  flipped[flipped.length - 5] ^= 0xff; // the CRC-32 or ISIZE trailer no longer matches
  await rejects(decodeBody(flipped, 'gzip', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
  const br = encoders.br(body);
  await rejects(decodeBody(br.subarray(0, br.length - 3), 'br', MiB), 'SWY_ERR_REQ_PARSE', 400, -32700);
});

test('maxDecodedBytes must be a positive integer', async () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) await rejects(decodeBody(body, 'gzip', bad), 'SWY_ERR_CONFIG_INVALID', 0, 0);
});

test('property: any bytes, compressed with any sequence of codings, decode back', async () => {
  const coding = fc.constantFrom('gzip', 'x-gzip', 'deflate', 'deflate-raw', 'br', 'identity');
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), fc.array(coding, { maxLength: 4 }), async (bytes, codings) => {
      let data: Buffer = Buffer.from(bytes);
      for (const c of codings) if (c !== 'identity') data = encoders[c === 'x-gzip' ? 'gzip' : c](data);
      const names = codings.map((c) => (c === 'deflate-raw' ? 'deflate' : c));
      assert.deepEqual(await decodeBody(data, names.join(', '), 4096), Buffer.from(bytes));
    }),
    { numRuns: 300 },
  );
});

// Found by a trial (2026-12-04): 100 brotli bombs of 809 bytes (a 16 MiB window) decoded at once
// held 1.9 GB: each decoder holds its window besides the bounded output. At most four bodies now
// decode at once; the rest wait their turn, and each still gets its own answer.
test('at most four bodies decode at once; the others wait, and every one gets its 413', async () => {
  const bomb = zlib.brotliCompressSync(Buffer.alloc(64 * 1024 * 1024, 0x20), {
    params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 24, [zlib.constants.BROTLI_PARAM_QUALITY]: 5 },
  });
  const runs = Array.from({ length: 20 }, () =>
    decodeBody(bomb, 'br', 1024 * 1024).then(
      () => 'decoded',
      (err: unknown) => (err instanceof SwitchyardError ? err.code : String(err)),
    ),
  );
  await Promise.resolve();
  assert.deepEqual(decodeLoad(), { active: 4, waiting: 16 });
  assert.deepEqual(new Set(await Promise.all(runs)), new Set(['SWY_ERR_HTTP_BODY_TOO_LARGE']));
  assert.deepEqual(decodeLoad(), { active: 0, waiting: 0 });
  // An identity body takes no turn.
  assert.equal((await decodeBody(Buffer.from('{}'), undefined, 1024)).toString(), '{}');
  assert.deepEqual(decodeLoad(), { active: 0, waiting: 0 });
});
