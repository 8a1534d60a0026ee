import { CLIENT_OWN_HEADERS } from '@postback/client/headers';
import { describe, expect, it } from 'vitest';
import type { Job } from '../job-types.ts';
import { type DeliveryTracing, requestUrl, requestUrls, safeTracing } from './tracing.ts';

describe('requestUrl', () => {
  it('joins the base URL and the path, without user info, query or fragment', () => {
    expect(requestUrl('https://user:secret@ads.example/api/?key=pbsk_x#f', '/v1/conversions/s2s')).toBe(
      'https://ads.example/api/v1/conversions/s2s',
    );
    expect(requestUrl('http://127.0.0.1:4010', '/v1/conversions/s2s/refund')).toBe(
      'http://127.0.0.1:4010/v1/conversions/s2s/refund',
    );
  });

  it('is null when the client does not say where it sends, or says it unreadably', () => {
    expect(requestUrl(undefined, '/v1/conversions/s2s')).toBeNull();
    expect(requestUrl('not a url', '/v1/conversions/s2s')).toBeNull();
  });
});

describe('requestUrls', () => {
  it('gives each path its URL, worked out again once the base URL changes', () => {
    let base: string | undefined = 'http://127.0.0.1:4010';
    const urlOf = requestUrls(() => base);
    expect(urlOf('/v1/conversions/s2s')).toBe('http://127.0.0.1:4010/v1/conversions/s2s');
    base = 'https://ads.example/api/';
    expect(urlOf('/v1/conversions/s2s')).toBe('https://ads.example/api/v1/conversions/s2s');
    expect(urlOf('/v1/conversions/s2s/refund')).toBe('https://ads.example/api/v1/conversions/s2s/refund');
    base = undefined;
    expect(urlOf('/v1/conversions/s2s')).toBeNull();
  });
});

describe('safeTracing', () => {
  const job = { id: 'j1', kind: 'confirm' } as Job;
  const request = {
    method: 'POST' as const,
    path: '/v1/conversions/s2s',
    url: null,
    attempt: 1,
    startedAt: 0,
  };

  it('passes on well-formed trace headers in lower case, and drops those a request carries itself or cannot carry', () => {
    const tracing: DeliveryTracing = {
      delivery: () => ({
        request: () => ({
          headers: {
            TraceParent: 'tp',
            tracestate: 'a=1',
            authorization: 'Bearer x',
            'Content-Type': 'text/plain',
            'bad name': 'x',
            baggage: 'line\nbreak',
          },
          end() {},
        }),
        end() {},
      }),
    };
    const trace = safeTracing(tracing, () => {})(job, 0);
    expect(trace.request(request).headers).toEqual({ traceparent: 'tp', tracestate: 'a=1' });
  });

  it('drops every header of the client’s own list (the one the client refuses calls by), and a cookie', () => {
    const headers: Record<string, string> = { traceparent: 'tp', cookie: 'a=1' };
    for (const name of CLIENT_OWN_HEADERS) {
      headers[name.toUpperCase()] = 'x';
    }
    const tracing: DeliveryTracing = {
      delivery: () => ({ request: () => ({ headers, end() {} }), end() {} }),
    };
    const trace = safeTracing(tracing, () => {})(job, 0);
    expect(trace.request(request).headers).toEqual({ traceparent: 'tp' });
  });

  it('does nothing without a tracing, and reports a hook that throws instead of throwing', () => {
    expect(safeTracing(undefined, () => {})(job, 0).request(request).headers).toBeUndefined();
    const errors: unknown[] = [];
    const broken: DeliveryTracing = {
      delivery: () => {
        throw new Error('broken');
      },
    };
    const trace = safeTracing(broken, (e) => errors.push(e))(job, 0);
    trace.request(request).end({ endedAt: 1, outcome: 'delivered', status: 200, errorType: null });
    trace.end({ outcome: 'delivered', endedAt: 1 });
    expect(errors).toHaveLength(1);
  });
});
