import { join } from 'node:path';
import { Api, P } from './support/api';
import { TestServer, startServer } from './support/server';

/** dist/main.js with V8's pretenuring statistics on its stdout (see the fixture). */
const TRACED_MAIN = join(__dirname, 'fixtures', 'heap-policy', 'trace-pretenuring.js');

/**
 * The service turns V8's allocation-site pretenuring off (src/runtime/heap-policy.ts): under load V8 had
 * decided to allocate a request's short-lived objects in the old generation. V8 traces its decisions at every
 * young collection while pretenuring is on; with it off it makes none, and traces nothing.
 */
describe('heap policy', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startServer({}, true, TRACED_MAIN);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('makes no pretenuring decision under a load of cached reads', async () => {
    const api = new Api(t.url);
    const token = await api.adminToken();
    const path = `${P}/datasets/expense_transactions/results?x_limit=100`;
    expect((await api.get(path, token)).status).toBe(200);
    // Ten at a time, as the bench's load: enough young collections for V8 to decide (each read makes
    // tens of KB of garbage, a young collection comes every 16 MB or so).
    let failures = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 400; i++) {
          if ((await api.get(path, token)).status !== 200) failures++;
        }
      }),
    );
    expect(failures).toBe(0);
    // Lines that are not JSON (V8's own) come as { raw }.
    const raw = t.server.logs.flatMap((line) => (typeof line.raw === 'string' ? [line.raw] : []));
    expect(raw.filter((line) => line.includes('pretenuring'))).toEqual([]);
  });
});
