// Named in the closing notes of the last round: an HTTP+SSE upstream written `type: sse` and then,
// in the reloaded file, as the equivalent `era: 2024-11-05` was counted as changed and restarted
// (a new upstream session, the old one's clients cut off): the words the operator used, kept only
// for the advice when the URL serves no HTTP+SSE stream (`sseSetting`), took part in comparing
// the entries. The same upstream written two equivalent ways is now the same upstream
// (docs/operations.md, "Hot reload").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/config/load.js';
import { configGateway } from '../helpers/ops.js';
import { httpSseStub } from '../helpers/stub-http.js';

const at = (raw: Record<string, unknown>) => validateConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, 'test', { env: {} });

test('rewriting `type: sse` as `era: 2024-11-05` does not restart the upstream', async (t) => {
  let initializes = 0;
  const url = await httpSseStub(
    t,
    'old-sse',
    (m, write) => {
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      initialize: (m, write) => {
        initializes++;
        write({ id: m.id, result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'old-sse', version: '1' } } });
      },
    },
  );
  const gw = await configGateway(t, { upstreams: { old: { type: 'sse', url } } });
  const before = initializes;
  assert.ok(before >= 1);

  const same = await gw.reload(at({ upstreams: { old: { url, era: '2024-11-05' } } }));
  assert.deepEqual([same.changed, same.unchanged], [[], ['old']]);
  // No new upstream session was opened: the running one serves on.
  assert.equal(initializes, before);

  // A real change still restarts it (the comparison is not blind).
  const moved = await gw.reload(at({ upstreams: { old: { url, era: '2024-11-05', headers: { 'x-a': '1' } } } }));
  assert.deepEqual([moved.changed, moved.unchanged], [['old'], []]);
});
