/**
 * A call's own `headers` (a trace context) and `onStatus` (the status of each answer, a 2xx's too): real
 * HTTP to a node:http server on an ephemeral port.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, RequestValidationError } from '../src/index.ts';
import { confirmation } from './helpers/fixtures.ts';
import { sendJson, startServer, type TestServer } from './helpers/server.ts';

const KEY = 'pbsk_HEADERS_test_key';
const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a call’s headers and onStatus', () => {
  it('sends the call’s headers beside the client’s own, and tells the status of a 2xx', async () => {
    server = await startServer((_req, res) => sendJson(res, 201, confirmation));
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    const statuses: number[] = [];
    await client.conversions.confirm(CONFIRM, {
      headers: { TraceParent: TRACEPARENT, tracestate: 'vendor=1' },
      onStatus: (status) => statuses.push(status),
    });
    await client.close();
    const [seen] = server.requests;
    expect(seen?.headers.traceparent).toBe(TRACEPARENT);
    expect(seen?.headers.tracestate).toBe('vendor=1');
    expect(seen?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(statuses).toEqual([201]);
  });

  it('tells the status of an error answer too', async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { detail: 'busy' }));
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    const statuses: number[] = [];
    await expect(
      client.conversions.confirm(CONFIRM, { onStatus: (s) => statuses.push(s) }),
    ).rejects.toThrow();
    await client.close();
    expect(statuses).toEqual([503]);
  });

  it.each([
    [{ Authorization: 'Bearer someone-else' }, 'headers.authorization'],
    [{ 'content-type': 'text/plain' }, 'headers.content-type'],
    [{ 'user-agent': 'x' }, 'headers.user-agent'],
    [{ 'bad name': 'x' }, 'headers'],
    [{ traceparent: 'line\nbreak' }, 'headers.traceparent'],
  ])('refuses %j before anything is sent, naming %s', async (headers, field) => {
    server = await startServer((_req, res) => sendJson(res, 200, confirmation));
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    const error = await client.conversions.confirm(CONFIRM, { headers }).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(error).toMatchObject({ field });
    expect(JSON.stringify(error)).not.toContain('someone-else');
    expect(server.requests).toHaveLength(0);
  });

  it('shows its base URL without user info', () => {
    const client = createClient({ baseUrl: 'https://user:pass@ads.example/prefix', apiKey: KEY });
    expect(client.baseUrl).toBe('https://ads.example/prefix');
  });
});
