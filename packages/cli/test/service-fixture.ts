/**
 * A sandbox of the ad service for the commands that talk to it (`doctor`, `reconcile`): one account with
 * a key per scope, campaigns made over `/v1` (s2s or pixel), clicks, and a small rewriting proxy that
 * changes the service's answers on the way (a field removed or added), for what no sandbox variant does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RunningSandbox, type SandboxOptions, startSandbox } from '@postback/sandbox';

/** A sandbox with one account. */
export interface ServiceFixture {
  sandbox: RunningSandbox;
  url: string;
  accountId: string;
  keys: { read: string; write: string; conversions: string; all: string };
  /** Creates a campaign of the account (CPA, bid 1 USD) on `source`; returns its id. */
  campaign(source: 's2s' | 'pixel', bidMicros?: number): Promise<string>;
  /** One ad click on the campaign, on the sandbox clock. */
  click(campaignId: string): Promise<{ token: string; clickedAt: number }>;
  close(): Promise<void>;
}

/** Starts a sandbox on a free port with one account. */
export async function startService(options: Omit<SandboxOptions, 'port'> = {}): Promise<ServiceFixture> {
  const sandbox = await startSandbox({ ...options, port: 0 });
  const account = await sandbox.control.createAccount();
  return {
    sandbox,
    url: sandbox.url,
    accountId: account.account_id,
    keys: account.keys,
    async campaign(source, bidMicros = 1_000_000) {
      const response = await fetch(new URL('/v1/campaigns', sandbox.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${account.keys.write}` },
        body: JSON.stringify({
          name: `${source} campaign`,
          pricing_model: 'cpa',
          conversion_source: source,
          bid_micros: bidMicros,
          total_budget_micros: 500_000_000,
          creatives: [{ headline: 'h', body: 'b', cta: 'Buy', landing_url: 'https://shop.example/' }],
        }),
      });
      const body = (await response.json()) as { id: string };
      if (!response.ok) throw new Error(`campaign: ${response.status} ${JSON.stringify(body)}`);
      return body.id;
    },
    async click(campaignId) {
      const click = await sandbox.control.click(campaignId);
      return { token: click.click_token, clickedAt: Date.parse(click.clicked_at) };
    },
    close: () => sandbox.close(),
  };
}

/** A proxy in front of `target` that may rewrite each JSON answer of a `GET` path. */
export interface RewritingProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts a proxy forwarding every request to `target` as it came; the JSON body of a `GET` answer whose
 * path `rewrite` names is passed through it (headers kept, length recomputed).
 */
export async function startRewritingProxy(
  target: string,
  rewrite: (path: string, body: unknown) => unknown,
): Promise<RewritingProxy> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const url = new URL(req.url ?? '/', target);
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k, v]) => typeof v === 'string' && k !== 'host' && k !== 'connection',
          ),
        ) as Record<string, string>;
        const answer = await fetch(url, {
          method: req.method ?? 'GET',
          headers,
          ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
        });
        let text = await answer.text();
        if (req.method === 'GET' && answer.headers.get('content-type')?.includes('json')) {
          text = JSON.stringify(rewrite(url.pathname, JSON.parse(text)));
        }
        const out: Record<string, string> = {};
        answer.headers.forEach((value, key) => {
          if (key !== 'content-length' && key !== 'transfer-encoding' && key !== 'connection')
            out[key] = value;
        });
        res.writeHead(answer.status, out).end(text);
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
