/**
 * Test fixtures: every test gets its own sandbox on an ephemeral port (so it owns all state, the clock
 * and the faults) and creates accounts whose raw clients (`wire.ts`: plain fetch, no schema) speak to it
 * over real HTTP. Everything is closed after the test.
 */
import { test as base } from 'vitest';
import { type RunningSandbox, type SandboxKeys, type SandboxOptions, startSandbox } from '../src/index.ts';
import { createWireClient, type Json, type WireClient } from './wire.ts';

/** A campaign creation body (any fields: the sandbox is the one that validates). */
export type CampaignCreate = Record<string, Json>;

/** One sandbox account with a client per key. */
export interface TestAccount {
  accountId: string;
  keys: SandboxKeys;
  /** Client with every scope. */
  all: WireClient;
  read: WireClient;
  write: WireClient;
  conversions: WireClient;
}

export interface SandboxFixtures {
  sandbox: RunningSandbox;
  /** Creates an account in the test's sandbox (balance and credit optional). */
  newAccount: (body?: { balance_micros?: number; credit_micros?: number }) => Promise<TestAccount>;
}

export const test = base.extend<SandboxFixtures>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from the destructuring.
  sandbox: async ({}, use) => {
    const sandbox = await startSandbox();
    await use(sandbox);
    await sandbox.close();
  },
  newAccount: async ({ sandbox }, use) => {
    await use((body) => accountIn(sandbox, body));
  },
});

/** Creates an account in `sandbox` and a raw client per key. */
export async function accountIn(
  sandbox: RunningSandbox,
  body?: { balance_micros?: number; credit_micros?: number },
): Promise<TestAccount> {
  const client = (apiKey: string) => createWireClient(sandbox.url, apiKey);
  const { account_id, keys } = await sandbox.control.createAccount(body);
  return {
    accountId: account_id,
    keys,
    all: client(keys.all),
    read: client(keys.read),
    write: client(keys.write),
    conversions: client(keys.conversions),
  };
}

/**
 * Runs `body` against a sandbox started with `options` (for tests of an option), closing it and the
 * clients afterwards.
 */
export async function withSandbox(
  options: SandboxOptions,
  body: (sandbox: RunningSandbox, newAccount: () => Promise<TestAccount>) => Promise<void>,
): Promise<void> {
  const sandbox = await startSandbox(options);
  try {
    await body(sandbox, () => accountIn(sandbox));
  } finally {
    await sandbox.close();
  }
}

/** A valid campaign creation body; override any field. */
export function campaignBody(overrides: Partial<CampaignCreate> = {}): CampaignCreate {
  return {
    name: 'Spring sale',
    pricing_model: 'cpa',
    bid_micros: 2_000_000,
    total_budget_micros: 50_000_000,
    conversion_source: 's2s',
    creatives: [
      { headline: 'Shoes', body: 'Half price', cta: 'Buy', landing_url: 'https://shop.example/shoes?ref=ad' },
    ],
    ...overrides,
  };
}

/** Creates an s2s campaign and one click on it; returns both. */
export async function campaignWithClick(
  sandbox: RunningSandbox,
  account: TestAccount,
  overrides: Partial<CampaignCreate> = {},
): Promise<{ campaignId: string; clickToken: string }> {
  const campaign = await account.write.campaigns.create(campaignBody(overrides));
  const click = await sandbox.control.click(campaign.id);
  return { campaignId: campaign.id, clickToken: click.click_token };
}

/** Raw HTTP to the sandbox (for what the client refuses to send, like a missing key). */
export async function raw(
  sandbox: RunningSandbox,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; json: Json; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
  });
  const text = await res.text();
  let json: Json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, json, text };
}

export const DAY_S = 86_400;
