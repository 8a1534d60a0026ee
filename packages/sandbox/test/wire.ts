/**
 * A raw HTTP client of the sandbox's `/v1` API for its tests: plain `fetch`, answers returned as the JSON
 * on the wire with no schema in between, errors as {@link WireError} carrying the status, the raw body
 * and the headers. The tests assert wire shapes field by field, so they check the sandbox against the
 * ad service's public REST API, never against `@postback/client`'s reading of it.
 */

/** Raw JSON of an answer, asserted by the tests field by field. */
// biome-ignore lint/suspicious/noExplicitAny: the raw JSON of the wire, not a typed model (that is the point).
export type Json = any;

/** A non-2xx answer: its status, `detail` when the body is a JSON object with one, the raw text, headers. */
export class WireError extends Error {
  override name = 'WireError';
  readonly status: number;
  readonly detail: string | undefined;
  readonly text: string;
  readonly headers: Headers;
  constructor(status: number, text: string, headers: Headers) {
    let detail: string | undefined;
    try {
      const body = JSON.parse(text) as { detail?: unknown };
      if (typeof body.detail === 'string') detail = body.detail;
    } catch {}
    super(`HTTP ${status}: ${detail ?? text}`);
    this.status = status;
    this.detail = detail;
    this.text = text;
    this.headers = headers;
  }
}

/** The `/v1` endpoints, named after the spec's resources; each resolves with the parsed JSON body. */
export interface WireClient {
  me: { get(): Promise<Json> };
  campaigns: {
    list(): Promise<Json>;
    create(body: unknown): Promise<Json>;
    plan(body: unknown): Promise<Json>;
  };
  refunds: { list(query: { campaign_id: string }): Promise<Json> };
  conversions: { confirm(body: unknown): Promise<Json>; refund(body: unknown): Promise<Json> };
  sites: {
    list(): Promise<Json>;
    create(body: unknown): Promise<Json>;
    verify(siteId: string): Promise<Json>;
  };
  placements: {
    list(query: { site_id: string }): Promise<Json>;
    create(body: unknown): Promise<Json>;
    live(placementId: string): Promise<Json>;
  };
  boost: { get(): Promise<Json>; claim(body: unknown): Promise<Json> };
  credits: { get(): Promise<Json> };
  segments: { list(): Promise<Json> };
}

/**
 * Sends one request with `Authorization: Bearer <apiKey>` and returns the JSON body of a 2xx, or throws
 * a {@link WireError}. A 2xx that is not JSON throws too: the default sandbox always answers JSON.
 */
export function createWireClient(baseUrl: string, apiKey: string): WireClient {
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new WireError(res.status, text, res.headers);
    return JSON.parse(text);
  };
  const seg = encodeURIComponent;
  return {
    me: { get: () => send('GET', '/v1/me') },
    campaigns: {
      list: () => send('GET', '/v1/campaigns'),
      create: (body) => send('POST', '/v1/campaigns', body),
      plan: (body) => send('POST', '/v1/campaigns/plan', body),
    },
    refunds: { list: (q) => send('GET', `/v1/refunds?campaign_id=${seg(q.campaign_id)}`) },
    conversions: {
      confirm: (body) => send('POST', '/v1/conversions/s2s', body),
      refund: (body) => send('POST', '/v1/conversions/s2s/refund', body),
    },
    sites: {
      list: () => send('GET', '/v1/sites'),
      create: (body) => send('POST', '/v1/sites', body),
      verify: (id) => send('POST', `/v1/sites/${seg(id)}/verify`),
    },
    placements: {
      list: (q) => send('GET', `/v1/placements?site_id=${seg(q.site_id)}`),
      create: (body) => send('POST', '/v1/placements', body),
      live: (id) => send('GET', `/v1/placements/${seg(id)}/live`),
    },
    boost: { get: () => send('GET', '/v1/boost'), claim: (body) => send('POST', '/v1/boost', body) },
    credits: { get: () => send('GET', '/v1/credits') },
    segments: { list: () => send('GET', '/v1/segments') },
  };
}
