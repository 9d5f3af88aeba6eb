// Regression (found by h-secrets): with a `policy`, each resources/read or resources/subscribe
// wrote its audit line (`policy decision`, info) with the resource URI whole as the component's
// name. A URI can be a signed URL whose query is its credential (`?X-Amz-Signature=`, `?sig=`),
// which is why spans never record it (docs/operations.md). The audit line now shows a resource's
// URI with its userinfo and credential-named query values `[redacted]`; tool and prompt names are
// unchanged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

const SIG = 'PLANTEDAUDITSIG0b5e';

test('the audit line of a resources/read names a signed URI with its signature redacted', async (t) => {
  const gw = await gatewayFromConfig(t, { policy: { default: 'allow' }, upstreams: { demo: { transport: 'embedded' } } });
  const uri = `https://files.example/report.pdf?sv=2024&sig=${SIG}`;
  await modernCall(gw.urls[0], 1, 'resources/read', { uri });
  await modernCall(gw.urls[0], 2, 'tools/call', { name: 'echo', arguments: { message: 'x' } });
  assert.deepEqual(
    gw.records.filter((r) => r.msg === 'policy decision').map((r) => r.component),
    [
      { kind: 'resource', name: 'https://files.example/report.pdf?sv=2024&sig=[redacted]', upstream: 'demo' },
      { kind: 'tool', name: 'echo', upstream: 'demo' },
    ],
  );
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(SIG));
});
