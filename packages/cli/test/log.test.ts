import { createRedactor } from '@postback/client';
import { describe, expect, it } from 'vitest';
import { createLogger, eventFields, LOG_LEVELS, type LogLevel, safeFields } from '../src/log.ts';

describe('the worker log', () => {
  it('reduces a job to its id, kind, order, state and attempts, leaving out the click token and lease', () => {
    const job = {
      id: '7',
      kind: 'confirm',
      orderId: 'A-1',
      state: 'pending',
      attempts: 2,
      clickToken: 'tok_secretish',
      lease: { token: 'l' },
      deadline: 0,
    };
    const fields = safeFields({ job, error: new Error('Ad service answered 503: busy') });
    expect(fields).toEqual({
      job: {
        id: '7',
        kind: 'confirm',
        orderId: 'A-1',
        state: 'pending',
        attempts: 2,
        deadline: '1970-01-01T00:00:00.000Z',
      },
      error: { name: 'Error', message: 'Ad service answered 503: busy' },
    });
    expect(JSON.stringify(fields)).not.toContain('tok_secretish');
  });

  it('drops nested objects that could carry a request or its headers', () => {
    const fields = safeFields({ request: { headers: { authorization: 'Bearer k' } }, count: 3 });
    expect(fields).toEqual({ count: 3 });
  });

  it('scrubs the API key from every line, in text and in JSON', () => {
    for (const format of ['text', 'json'] as const) {
      const lines: string[] = [];
      const logger = createLogger(
        format,
        (line) => lines.push(line),
        createRedactor('pbsk_live_123'),
        () => 0,
      );
      logger.log('error', 'paused', { reason: 'key pbsk_live_123 was refused' });
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain('pbsk_live_123');
      expect(lines[0]).toContain('[redacted]');
    }
  });

  it("writes pino's JSON lines: numeric level, epoch-ms time, pid, hostname, the fields, msg last", () => {
    const lines: string[] = [];
    const logger = createLogger(
      'json',
      (line) => lines.push(line),
      undefined,
      () => Date.UTC(2026, 0, 2),
      { pid: 4242, hostname: 'box' },
    );
    logger.log('warn', 'retried', { jobId: '1', note: 'a\nb', level: 'sneaky' });
    expect(lines[0]?.endsWith('\n')).toBe(true);
    expect(lines[0]?.trimEnd().includes('\n')).toBe(false);
    expect(lines[0]).toBe(
      '{"level":40,"time":1767312000000,"pid":4242,"hostname":"box","event":"retried","jobId":"1","note":"a\\nb","_level":"sneaky","msg":"retried"}\n',
    );
  });

  it('drops lines below --log-level, with pino level numbers 10..60', () => {
    const seen = (level: LogLevel) => {
      const lines: string[] = [];
      const logger = createLogger('json', (line) => lines.push(line), undefined, Date.now, { level });
      for (const l of LOG_LEVELS) logger.log(l, `at-${l}`);
      return lines.map((line) => (JSON.parse(line) as { level: number }).level);
    };
    expect(seen('info')).toEqual([30, 40, 50, 60]);
    expect(seen('trace')).toEqual([10, 20, 30, 40, 50, 60]);
    expect(seen('fatal')).toEqual([60]);
  });

  it('logs chosen fields of an event, not the job snapshot: no stale state, one campaignId, ISO times', () => {
    const job = {
      id: '7',
      kind: 'confirm',
      orderId: 'A-1',
      state: 'inflight',
      attempts: 1,
      campaignId: null,
      clickToken: 'tok_x',
      deadline: Date.UTC(2026, 0, 9),
    };
    const fields = eventFields('delivered', { job, campaignId: 'cmp_9', at: Date.UTC(2026, 0, 2) });
    expect(fields).toEqual({
      jobId: '7',
      kind: 'confirm',
      orderId: 'A-1',
      attempts: 1,
      deadline: '2026-01-09T00:00:00.000Z',
      campaignId: 'cmp_9',
      at: '2026-01-02T00:00:00.000Z',
    });
    expect(
      eventFields('retried', { job, reason: 'busy', status: 503, nextAttemptAt: 0, lastChance: false }),
    ).toMatchObject({ jobId: '7', status: 503, reason: 'busy', nextAttemptAt: '1970-01-01T00:00:00.000Z' });
  });
});

describe('the worker log of held jobs (a campaign not on s2s)', () => {
  it('logs held with the campaign, the reason and the next probe (never the click token), and hold-released with the count', () => {
    const job = { id: '7', kind: 'confirm', orderId: 'A-7', attempts: 0, clickToken: 'tok_secret_0123' };
    const held = eventFields('held', {
      job,
      account: 'shop-1',
      campaignId: 'cmp_pix',
      reason: 'Ad service answered 422: campaign cmp_pix is not on s2s',
      nextProbeAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    });
    expect(held).toEqual({
      jobId: '7',
      kind: 'confirm',
      orderId: 'A-7',
      attempts: 0,
      account: 'shop-1',
      campaignId: 'cmp_pix',
      reason: 'Ad service answered 422: campaign cmp_pix is not on s2s',
      nextProbeAt: '2026-01-02T03:04:05.000Z',
    });
    expect(JSON.stringify(held)).not.toContain('tok_secret');
    expect(
      eventFields('hold-released', { job, account: null, campaignId: null, released: 19, heldForMs: 3_000 }),
    ).toEqual({ account: null, campaignId: null, released: 19, heldForMs: 3_000 });
  });

  it('logs switch-seen with the campaign, the time and what onSwitch did', () => {
    const at = Date.UTC(2026, 0, 3, 8, 0, 0);
    expect(
      eventFields('switch-seen', {
        account: 'shop-2',
        campaignId: 'cmp_pix',
        at,
        onSwitch: 'ask',
        decided: 0,
      }),
    ).toEqual({
      account: 'shop-2',
      campaignId: 'cmp_pix',
      at: '2026-01-03T08:00:00.000Z',
      onSwitch: 'ask',
      decided: 0,
    });
  });
});

describe('the worker log with per-account keys', () => {
  it('logs account-paused and account-resumed with the account, status, reason and until, and a job its account', () => {
    const until = Date.UTC(2026, 0, 2, 3, 4, 5);
    expect(
      eventFields('account-paused', {
        account: 'shop-18',
        status: 401,
        reason: 'Ad service answered 401',
        until,
      }),
    ).toEqual({
      account: 'shop-18',
      status: 401,
      reason: 'Ad service answered 401',
      until: '2026-01-02T03:04:05.000Z',
    });
    expect(eventFields('account-resumed', { account: null, pausedForMs: 1_500 })).toEqual({
      account: null,
      pausedForMs: 1_500,
    });
    const job = {
      id: '9',
      kind: 'confirm',
      orderId: 'A-1',
      attempts: 1,
      account: 'shop-18',
      clickToken: 'tok',
    };
    expect(eventFields('retried', { job, status: 503, reason: 'busy' })).toMatchObject({
      jobId: '9',
      account: 'shop-18',
    });
  });

  it('scrubs with the redactor of the moment at each line (keys reloaded after the logger was made)', () => {
    const lines: string[] = [];
    let redact = createRedactor(['pbsk_first']);
    const logger = createLogger(
      'text',
      (line) => lines.push(line),
      (line) => redact(line),
      () => 0,
    );
    logger.log('info', 'x', { a: 'pbsk_first pbsk_later' });
    redact = createRedactor(['pbsk_first', 'pbsk_later']);
    logger.log('info', 'x', { a: 'pbsk_first pbsk_later' });
    expect(lines[0]).toContain('pbsk_later');
    expect(lines[0]).not.toContain('pbsk_first');
    expect(lines[1]).not.toMatch(/pbsk_(first|later)/);
  });

  it('scrubs a key in the forms a line holds it: JSON-escaped in --log json, percent-encoded from a URL', () => {
    // A key may hold any printable ASCII: `"` and `\\` come out of JSON.stringify escaped, so the key's
    // literal text is not in the line (a split on the literal key, as before, left these whole).
    const key = 'pbsk_a"b\\c/d';
    for (const format of ['json', 'text'] as const) {
      const lines: string[] = [];
      const logger = createLogger(
        format,
        (line) => lines.push(line),
        createRedactor(key),
        () => 0,
      );
      logger.log('error', 'dead', { reason: `echoed ${key} and ${encodeURIComponent(key)}` });
      expect(lines[0]).not.toContain(JSON.stringify(key).slice(1, -1));
      expect(lines[0]).not.toContain(encodeURIComponent(key));
      expect(lines[0]?.match(/\[redacted\]/g)).toHaveLength(2);
    }
  });
});

describe('the worker log of shadow mode', () => {
  it('logs shadowed with the job and the path it would have been sent to, never the body or the click token', () => {
    const job = { id: '8', kind: 'confirm', orderId: 'A-8', attempts: 0, clickToken: 'tok_secret_0456' };
    const request = {
      path: '/v1/conversions/s2s',
      body: { click_token: 'tok_secret_0456', order_id: 'A-8', value_micros: 1 },
    };
    const fields = eventFields('shadowed', { job, at: Date.UTC(2026, 0, 2), request });
    expect(fields).toEqual({
      jobId: '8',
      kind: 'confirm',
      orderId: 'A-8',
      attempts: 0,
      path: '/v1/conversions/s2s',
      at: '2026-01-02T00:00:00.000Z',
    });
    expect(JSON.stringify(fields)).not.toContain('tok_secret');
  });
});
