/** Response bodies shaped as the sandbox answers, for tests that stand in for the service. */

export const NOW = '2026-11-22T05:00:00.000Z';

export const creative = {
  headline: 'Fresh coffee',
  body: 'Roasted this week',
  cta: 'Order',
  landing_url: 'https://shop.example/coffee',
  format: 'card',
} as const;

export const campaign = {
  id: 'cmp_abc123',
  name: 'Launch',
  pricing_model: 'cpa',
  status: 'review',
  bid_micros: 2_000_000,
  total_budget_micros: 100_000_000,
  daily_cap_micros: null,
  spend_micros: 0,
  conversion_source: 's2s',
  target_categories: ['coffee'],
  target_segments: [],
  exclude_segments: [],
  creatives: [creative],
  created_at: NOW,
};

export const confirmation = {
  order_id: 'ord_1',
  campaign_id: 'cmp_abc123',
  value_micros: 12_340_000,
  status: 'confirmed',
  confirmed_at: NOW,
  duplicate: false,
};

export const reversal = {
  order_id: 'ord_1',
  campaign_id: 'cmp_abc123',
  status: 'reversed',
  reversed_at: NOW,
  duplicate: false,
};

export const site = {
  id: 'site_1',
  domain: 'blog.example.com',
  verified: false,
  verification: { method: 'dns_txt', token: 'postback-verify-1' },
  created_at: NOW,
};

export const placement = { id: 'plc_1', site_id: 'site_1', name: 'sidebar', format: 'card', created_at: NOW };
