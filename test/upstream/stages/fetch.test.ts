import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpClient } from '../../../src/upstream/http.js';
import { fetchParsed } from '../../../src/upstream/stages/fetch.js';
import type { ProviderCall } from '../../../src/providers/types.js';
import { type FakeServer, startFakeServer } from '../../fakes/fake-server.js';

/* Stage 5, fetch (src/upstream/stages/fetch.ts) over the real HTTP layer and a fake upstream. */

const SECRET = 'fetch-stage-secret-77';
let fake: FakeServer;
let http: HttpClient;

beforeAll(async () => {
  fake = await startFakeServer({
    '/json': () => ({ headers: { 'x-ratelimit-remaining': '4' }, body: { rows: ['a'] } }),
    '/html': () => ({ headers: { 'content-type': 'text/html' }, body: '<html>portal</html>' }),
  });
  http = createHttpClient({ userAgent: 'sift-test', secrets: [SECRET] });
});
afterAll(async () => {
  await http?.close();
  await fake?.close();
});

const call = (path: string, parse: (b: unknown) => unknown = (b) => b, extra: Partial<ProviderCall<unknown>> = {}) =>
  ({ provider: 'provider_06', request: { url: `${fake.url}${path}` }, parse, ...extra }) as ProviderCall<unknown>;

describe('the fetch stage', () => {
  it("hands the parser the JSON body, and the answer's rate-limit headers to the pacing stage", async () => {
    let limits: Readonly<Record<string, string>> | undefined;
    const value = await fetchParsed(
      http,
      call('/json', (b) => (b as { rows: string[] }).rows),
      [],
      {
        timeoutMs: 2000,
        onAnswer: (l) => (limits = l),
      },
    );
    expect(value).toEqual(['a']);
    expect(limits).toMatchObject({ 'x-ratelimit-remaining': '4' });
  });

  it('names an HTML page instead of JSON a bad response, with its content type', async () => {
    await expect(fetchParsed(http, call('/html'), [], { timeoutMs: 2000 })).rejects.toMatchObject({
      kind: 'bad_response',
      message: expect.stringContaining('content type text/html'),
    });
  });

  it("passes a text body through when asked, and keeps secrets out of a parser's complaint", async () => {
    expect(
      await fetchParsed(
        http,
        call('/html', (b) => b, { text: true }),
        [],
        { timeoutMs: 2000 },
      ),
    ).toBe('<html>portal</html>');
    const complaining = call('/json', () => {
      throw new Error(`no rows for key ${SECRET}`);
    });
    const failure = await fetchParsed(http, complaining, [SECRET], { timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'bad_response' });
    expect(String((failure as Error).message)).not.toContain(SECRET);
  });
});
