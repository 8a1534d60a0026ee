import { describe, expect, it } from 'vitest';
import { createLogger, safeFields } from '../src/log.ts';

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
        ['pbsk_live_123'],
        () => 0,
      );
      logger.log('error', 'paused', { reason: 'key pbsk_live_123 was refused' });
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain('pbsk_live_123');
      expect(lines[0]).toContain('[redacted]');
    }
  });

  it('writes one parseable JSON object per line in json format', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'json',
      (line) => lines.push(line),
      [],
      () => Date.UTC(2026, 0, 2),
    );
    logger.log('info', 'delivered', { job: { id: '1' }, note: 'a\nb' });
    expect(lines[0]?.endsWith('\n')).toBe(true);
    expect(lines[0]?.trimEnd().includes('\n')).toBe(false);
    expect(JSON.parse(lines[0] as string)).toEqual({
      time: '2026-01-02T00:00:00.000Z',
      level: 'info',
      event: 'delivered',
      job: { id: '1' },
      note: 'a\nb',
    });
  });
});
