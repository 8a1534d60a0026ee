/**
 * Every answer's `Date` header comes from the sandbox clock (RFC 7231 IMF-fixdate), so a client that
 * compares its clock with the service's `Date` sees the skew a test sets by moving the sandbox clock:
 * `/v1` successes and refusals, unknown paths, the control API, and malformed requests alike.
 */
import { connect } from 'node:net';
import { describe, expect, test } from 'vitest';
import { campaignBody, raw, withSandbox } from './fixtures.ts';

const START = Date.UTC(2030, 0, 15, 10, 0, 0);
const DAY_MS = 86_400_000;

describe('the Date header', () => {
  test('follows the sandbox clock on every route, and moves when the clock is advanced', async () => {
    let real = START;
    await withSandbox({ now: () => real }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      const answers = async () => [
        await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read }),
        await raw(sandbox, 'POST', '/v1/campaigns', { key: acct.keys.write, body: campaignBody() }),
        await raw(sandbox, 'GET', '/v1/me'),
        await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.conversions }),
        await raw(sandbox, 'GET', '/nowhere'),
        await raw(sandbox, 'GET', '/_sandbox/clock'),
        await raw(sandbox, 'POST', '/_sandbox/clicks', { body: '{' }),
      ];
      const first = await answers();
      expect(first.map((a) => a.status)).toEqual([200, 201, 401, 403, 404, 200, 400]);
      for (const a of first) expect(a.headers.get('date')).toBe('Tue, 15 Jan 2030 10:00:00 GMT');

      await sandbox.control.advanceClock(3 * 86_400 + 0.5);
      real += 1_000; // the real clock goes on too
      for (const a of await answers())
        expect(Date.parse(a.headers.get('date') ?? '')).toBe(START + 3 * DAY_MS + 1_000);
    });
  });

  test('a request the HTTP parser refuses gets it too', async () => {
    await withSandbox({ now: () => START }, async (sandbox) => {
      sandbox.advance(DAY_MS);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(sandbox.port, '127.0.0.1');
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.end('FOO / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\ndate: Wed, 16 Jan 2030 10:00:00 GMT\r\n/i);
    });
  });
});
