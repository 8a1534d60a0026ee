/**
 * The service's side of `postback shadow`: each account's campaign spend (`GET /v1/campaigns` with a key
 * of the read scope), read tolerantly by reconcile's `serviceFigures` (the spec does not show the field
 * names: a campaign without a readable spend is left out and said so), and kept in the outbox as a
 * `SpendReading`, so the report can show what the pixel billed between two readings.
 */
import type { AdServiceClient } from '@postback/client';
import type { OutboxShadow } from '@postback/core';
import type { SpendReading } from '@postback/core/store';
import { serviceFigures } from '../reconcile/service-side.ts';

/** What reading the spend needs: the client and the key of each account (null: the default key). */
export interface SpendSource {
  client: AdServiceClient;
  keyFor(account: string | null): string | undefined;
}

/**
 * Reads the spend of each account's campaigns now and keeps each reading in the outbox; returns the
 * readings taken and notes on what could not be read (no key, a refused key, a campaign without spend).
 */
export async function takeSpendReadings(
  shadow: OutboxShadow,
  source: SpendSource,
  accounts: ReadonlySet<string | null>,
  now: () => number,
): Promise<{ readings: SpendReading[]; notes: string[] }> {
  const readings: SpendReading[] = [];
  const notes: string[] = [];
  for (const account of accounts) {
    const named = account === null ? 'the jobs without an account (POSTBACK_API_KEY)' : `account ${account}`;
    const apiKey = source.keyFor(account);
    if (apiKey === undefined) {
      notes.push(`no key for ${named}: its spend is not read`);
      continue;
    }
    let listed: unknown[];
    try {
      listed = (await source.client.campaigns.list({ apiKey })).campaigns;
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      notes.push(
        `GET /v1/campaigns for ${named} failed${typeof status === 'number' ? ` (${status})` : ''}: spend not read (a key with the read scope is needed)`,
      );
      continue;
    }
    const campaigns: Array<{ campaignId: string; spendMicros: number }> = [];
    for (const campaign of listed as Array<{ id: string }>) {
      const spend = serviceFigures(campaign as Parameters<typeof serviceFigures>[0]).spend_micros;
      if (spend === null) notes.push(`${campaign.id} (${named}) lists no readable spend`);
      else campaigns.push({ campaignId: campaign.id, spendMicros: spend });
    }
    const reading: SpendReading = { account, at: now(), campaigns };
    await shadow.noteSpend(reading);
    readings.push(reading);
  }
  return { readings, notes };
}

/** The total spend of a reading, in micros. */
export function totalSpend(reading: SpendReading): number {
  return reading.campaigns.reduce((sum, c) => sum + c.spendMicros, 0);
}
