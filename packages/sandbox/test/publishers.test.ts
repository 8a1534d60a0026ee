/**
 * Publisher side and account extras: sites and domain verification, placements and the 24-hour
 * liveness window, segments and their 7-day/100-pageview rule, the Launch Day Boost and credits.
 */
import { describe, expect } from 'vitest';
import { campaignBody, DAY_S, test } from './fixtures.ts';

describe('sites', () => {
  test('registers a domain unverified with a token to publish, and lists it', async ({ newAccount }) => {
    const acct = await newAccount();
    const site = await acct.write.sites.create({
      domain: 'Blog.Example.com',
      verification_method: 'meta_tag',
    });
    expect(site).toMatchObject({
      id: expect.stringMatching(/^site_/),
      domain: 'blog.example.com',
      verified: false,
      verification: { method: 'meta_tag', token: expect.stringMatching(/^postback-verify-/) },
    });
    expect((await acct.read.sites.list()).sites).toEqual([site]);
  });

  test('a second registration of the same domain by the same account is a 409', async ({ newAccount }) => {
    const acct = await newAccount();
    await acct.write.sites.create({ domain: 'dup.example.com' });
    await expect(acct.write.sites.create({ domain: 'dup.example.com' })).rejects.toMatchObject({
      status: 409,
      detail: expect.stringContaining('dup.example.com'),
    });
  });

  test('verifies only when the domain publishes the site token by the site method', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const site = await acct.write.sites.create({ domain: 'proof.example.com' });
    expect(await acct.write.sites.verify(site.id)).toMatchObject({
      site_id: site.id,
      verified: false,
      method: 'dns_txt',
    });
    await sandbox.control.recordDomainProof('proof.example.com', 'dns_txt', 'postback-verify-wrong');
    await sandbox.control.recordDomainProof('proof.example.com', 'file', site.verification.token);
    await sandbox.control.recordDomainProof('other.example.com', 'dns_txt', site.verification.token);
    expect((await acct.write.sites.verify(site.id)).verified).toBe(false);
    await sandbox.control.recordDomainProof('proof.example.com', 'dns_txt', site.verification.token);
    const result = await acct.write.sites.verify(site.id);
    expect(result.verified).toBe(true);
    expect(Date.parse(result.checked_at)).toBeLessThanOrEqual(sandbox.now());
    expect((await acct.read.sites.list()).sites[0]?.verified).toBe(true);
  });
});

describe('placements', () => {
  test('are created on an own site and listed per site', async ({ newAccount }) => {
    const acct = await newAccount();
    const a = await acct.write.sites.create({ domain: 'a.example.com' });
    const b = await acct.write.sites.create({ domain: 'b.example.com' });
    const p = await acct.write.placements.create({ site_id: a.id, name: 'sidebar' });
    expect(p).toMatchObject({
      id: expect.stringMatching(/^plc_/),
      site_id: a.id,
      name: 'sidebar',
      format: 'card',
    });
    expect((await acct.read.placements.list({ site_id: a.id })).placements).toEqual([p]);
    expect((await acct.read.placements.list({ site_id: b.id })).placements).toEqual([]);
  });

  test('are live only with a request in the last 24 hours of the sandbox clock', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const site = await acct.write.sites.create({ domain: 'live.example.com' });
    const p = await acct.write.placements.create({ site_id: site.id, name: 'top' });
    expect(await acct.read.placements.live(p.id)).toEqual({
      placement_id: p.id,
      live: false,
      last_request_at: null,
    });
    const { last_request_at } = await sandbox.control.recordPlacementRequest(p.id);
    expect(await acct.read.placements.live(p.id)).toEqual({
      placement_id: p.id,
      live: true,
      last_request_at,
    });
    await sandbox.control.advanceClock(DAY_S - 1);
    expect((await acct.read.placements.live(p.id)).live).toBe(true);
    await sandbox.control.advanceClock(1);
    expect(await acct.read.placements.live(p.id)).toEqual({
      placement_id: p.id,
      live: false,
      last_request_at,
    });
  });
});

describe('segments', () => {
  test('lists a label only with at least 100 pageviews over the last 7 days', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.recordPageviews('gardening', 60);
    await sandbox.control.recordPageviews('cooking', 99);
    expect((await acct.read.segments.list()).segments).toEqual([]);
    await sandbox.control.advanceClock(3 * DAY_S);
    await sandbox.control.recordPageviews('gardening', 40);
    expect((await acct.read.segments.list()).segments).toEqual([{ label: 'gardening', pageviews_7d: 100 }]);
    // The first 60 views leave the 7-day window four days later.
    await sandbox.control.advanceClock(4 * DAY_S);
    expect((await acct.read.segments.list()).segments).toEqual([]);
  });
});

describe('boost and credits', () => {
  test('the Launch Day Boost is claimed once per account for an own campaign and expires a day later', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const campaign = await acct.write.campaigns.create(campaignBody());
    expect(await acct.read.boost.get()).toEqual({
      available: true,
      claimed_campaign_id: null,
      expires_at: null,
    });
    const claim = await acct.write.boost.claim({ campaign_id: campaign.id });
    expect(claim).toMatchObject({ campaign_id: campaign.id, claimed: true });
    expect(Date.parse(claim.expires_at) - sandbox.now()).toBeGreaterThan(DAY_S * 1000 - 60_000);
    expect(await acct.read.boost.get()).toEqual({
      available: false,
      claimed_campaign_id: campaign.id,
      expires_at: claim.expires_at,
    });
    await expect(acct.write.boost.claim({ campaign_id: campaign.id })).rejects.toMatchObject({ status: 409 });
  });

  test('credits show the balance and the grant from account creation', async ({ newAccount }) => {
    const acct = await newAccount({ credit_micros: 7_000_000 });
    const credits = await acct.read.credits.get();
    expect(credits).toEqual({
      balance_micros: 7_000_000,
      activity: [{ at: expect.any(String), amount_micros: 7_000_000, reason: 'grant' }],
    });
  });
});
