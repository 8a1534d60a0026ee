/** Writing the click cookie into a Node response without losing the cookies set before it. */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appendSetCookie } from './cookie-header.ts';

/** One real request to a server whose handler sets `before` and then appends ours. */
async function setCookiesOf(before: (res: ServerResponse) => void): Promise<string[]> {
  const server = createServer((_req, res) => {
    before(res);
    appendSetCookie(res, 'postback_click=v; Path=/');
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return response.headers.getSetCookie();
  } finally {
    server.close();
  }
}

describe('appendSetCookie', () => {
  it('adds the cookie alone, after one earlier cookie, and after a list of them', async () => {
    expect(await setCookiesOf(() => {})).toEqual(['postback_click=v; Path=/']);
    expect(await setCookiesOf((res) => res.setHeader('set-cookie', 'session=1'))).toEqual([
      'session=1',
      'postback_click=v; Path=/',
    ]);
    expect(await setCookiesOf((res) => res.setHeader('Set-Cookie', ['a=1', 'b=2']))).toEqual([
      'a=1',
      'b=2',
      'postback_click=v; Path=/',
    ]);
  });
});
