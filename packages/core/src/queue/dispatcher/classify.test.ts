import { createClient } from '@postback/client';
import {
  ConnectionError,
  errorFromResponse,
  InvalidResponseError,
  RequestValidationError,
  TimeoutError,
  TransportUnavailableError,
} from '@postback/client/errors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../memory-outbox.ts';
import { classifyFailure, redactSecrets } from './classify.ts';
import { createDispatcher } from './dispatcher.ts';

describe('classifyFailure', () => {
  it.each([
    [401, 'auth', false],
    [403, 'auth', false],
    [429, 'rate-limited', false],
    [408, 'transient', true],
    [500, 'transient', true],
    [503, 'transient', true],
    [400, 'permanent', false],
    [402, 'permanent', false],
    [404, 'permanent', false],
    [409, 'permanent', false],
    [422, 'permanent', false],
  ] as const)('sorts an HTTP %i answer as %s (quick retry: %s)', (status, cls, blip) => {
    const failure = classifyFailure(errorFromResponse(status, { detail: 'the detail' }));
    expect(failure).toMatchObject({ class: cls, blip, status });
    expect(failure.reason).toContain('the detail');
  });

  it.each([
    ['campaign cmp_spring-1 is not on s2s: its conversion source is pixel', 'cmp_spring-1'],
    ['Conversion source of campaign cmp_9 must be s2s', 'cmp_9'],
    ['campaign is not set to S2S', null],
    ['this campaign bills by pixel', null],
  ])(
    'holds a 422 saying the campaign is not on s2s (%s), naming the campaign when the detail does',
    (detail, campaignId) => {
      const failure = classifyFailure(errorFromResponse(422, { detail }));
      expect(failure).toMatchObject({ class: 'held', status: 422, maybeApplied: false, campaignId });
      expect(failure.reason).toContain(detail);
    },
  );

  it('takes a campaign id from the detail only whole and unchanged by redaction, and obeys a custom pattern', () => {
    const detail = 'campaign cmp_pbsk_live_SECRET is not on s2s';
    const redact = (text: string) => text.replaceAll('pbsk_live_SECRET', '[redacted]');
    expect(classifyFailure(errorFromResponse(422, { detail }), { redact })).toMatchObject({
      class: 'held',
      campaignId: null,
    });
    const custom = { campaignNotS2sPattern: /S2S_DISABLED/ };
    expect(classifyFailure(errorFromResponse(422, { detail: 'S2S_DISABLED' }), custom).class).toBe('held');
    expect(classifyFailure(errorFromResponse(422, { detail: 'not on s2s' }), custom).class).toBe('permanent');
    // A closed window wins: that job cannot be sent whatever the campaign.
    const both = 'click is older than 7 days; campaign cmp_1 is not on s2s';
    expect(classifyFailure(errorFromResponse(422, { detail: both })).class).toBe('window-closed');
  });

  it('keeps the Retry-After of a 429', () => {
    expect(classifyFailure(errorFromResponse(429, {}, '30')).retryAfterMs).toBe(30_000);
  });

  it('treats timeouts and connection failures as blips worth a quick retry', () => {
    expect(classifyFailure(new TimeoutError('timeout', 'timed out'))).toMatchObject({
      class: 'transient',
      blip: true,
    });
    expect(classifyFailure(new ConnectionError('connection', 'ECONNRESET'))).toMatchObject({
      class: 'transient',
      blip: true,
    });
    expect(classifyFailure(new DOMException('aborted', 'TimeoutError'))).toMatchObject({
      class: 'transient',
      blip: true,
    });
  });

  it('takes any 2xx as applied, whether its body is cut short or of another shape', () => {
    const cutShort = new InvalidResponseError('invalid_response', 'the 200 response is not valid JSON', {
      status: 200,
      retryable: true,
    });
    expect(classifyFailure(cutShort)).toMatchObject({ class: 'applied', blip: false, status: 200 });
    const wrongShape = new InvalidResponseError('invalid_response', 'campaign_id: expected string', {
      status: 201,
      retryable: false,
    });
    expect(classifyFailure(wrongShape)).toMatchObject({ class: 'applied', status: 201 });
  });

  it.each([
    [errorFromResponse(503, { detail: 'busy' }), true],
    [errorFromResponse(408, {}), true],
    [errorFromResponse(422, { detail: 'bad order' }), false],
    [errorFromResponse(429, {}), false],
    [errorFromResponse(401, {}), false],
    [new TimeoutError('timeout', 'timed out', { retryable: true }), true],
    [new ConnectionError('connection', 'reset', { retryable: true, detail: 'ECONNRESET' }), true],
    [new ConnectionError('connection', 'refused', { retryable: true, detail: 'ECONNREFUSED' }), false],
    [new RequestValidationError('order_id', 'must not be empty'), false],
    [new Error('something odd'), true],
  ])('says whether %s may have been applied (%s)', (error, maybeApplied) => {
    expect(classifyFailure(error).maybeApplied).toBe(maybeApplied);
  });

  it('dead-letters an unreadable answer without a status and a request that could not be built', () => {
    expect(classifyFailure(new InvalidResponseError('invalid_response', 'truncated JSON')).class).toBe(
      'permanent',
    );
    expect(classifyFailure(new RequestValidationError('order_id', 'must not be empty')).class).toBe(
      'permanent',
    );
  });

  it('pauses (auth) on a key the client will not send or a missing key, instead of dead-lettering the job', async () => {
    expect(classifyFailure(new RequestValidationError('apiKey', 'must not contain whitespace')).class).toBe(
      'auth',
    );
    const keyless = createClient({ baseUrl: 'http://127.0.0.1:9' });
    const err = await keyless.conversions
      .confirm({ click_token: 'tok_abc_AbC-9', order_id: 'o', value_micros: 1 })
      .catch((e: unknown) => e);
    expect(classifyFailure(err)).toMatchObject({ class: 'auth', maybeApplied: false });
  });

  it('pauses on a transport that can never work, naming the cause, and keeps "maybe sent" when unsure', () => {
    const denied = new TransportUnavailableError(
      'POST /v1/conversions/s2s: transport unavailable: NotCapable: Requires net access to "ads.example:443"',
      { maybeSent: false },
    );
    expect(classifyFailure(denied)).toMatchObject({
      class: 'misconfigured',
      blip: false,
      maybeApplied: false,
    });
    expect(classifyFailure(denied).reason).toContain('NotCapable: Requires net access');
    const unsure = new TransportUnavailableError('transport unavailable: TypeError: x is not a function', {
      maybeSent: true,
    });
    expect(classifyFailure(unsure)).toMatchObject({ class: 'misconfigured', maybeApplied: true });
    // A client that lets the runtime's own error through is read the same way.
    const raw = Object.assign(new Error('Requires net access'), { name: 'NotCapable' });
    expect(classifyFailure(raw)).toMatchObject({ class: 'misconfigured', maybeApplied: false });
    expect(classifyFailure(Object.assign(new Error('denied'), { code: 'ERR_ACCESS_DENIED' })).class).toBe(
      'misconfigured',
    );
    // Ordinary refusals and resets stay transient.
    const refused = new ConnectionError('connection', 'refused', { retryable: true, detail: 'ECONNREFUSED' });
    expect(classifyFailure(refused).class).toBe('transient');
  });

  it('retries an unknown error rather than dead-letter a sale', () => {
    expect(classifyFailure(new Error('something odd'))).toMatchObject({ class: 'transient', blip: false });
    expect(classifyFailure('a string')).toMatchObject({ class: 'transient' });
  });
});

describe('a Dispatcher whose client cannot send at all', () => {
  it('pauses delivery with the cause in the reason and does not burn the attempt', async () => {
    const now = 1_800_000_000_000;
    const outbox = createMemoryOutbox({ now: () => now });
    const click = { token: 'tok_abcdefghijklmnop', clickedAt: now - 1_000 };
    await outbox.confirm({ orderId: 'ord_1', valueMicros: 1_000, click });
    // Fails as Deno's fetch does without --allow-net for the host.
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'pbsk_test_key_000000',
      fetch: async () => {
        throw Object.assign(new Error('Requires net access to "127.0.0.1:9"'), { name: 'NotCapable' });
      },
    });
    const dispatcher = createDispatcher({ outbox, client, now: () => now });
    const paused: string[] = [];
    dispatcher.on('paused', ({ reason }) => paused.push(reason));
    const summary = await dispatcher.drain();
    expect(summary).toMatchObject({ claimed: 1, deferred: 1, retried: 0, dead: 0 });
    expect(dispatcher.state).toBe('paused');
    expect(paused).toEqual([
      expect.stringContaining('transport unavailable: NotCapable: Requires net access'),
    ]);
    const [job] = await outbox.getByOrder('ord_1');
    expect(job).toMatchObject({ state: 'pending', attempts: 0, maybeAppliedAt: null });
  });
});

describe('redactSecrets', () => {
  it('removes bearer credentials and key=value secrets', () => {
    expect(redactSecrets('header Authorization: Bearer pbsk_live_abc.def')).toBe(
      'header Authorization: Bearer [redacted]',
    );
    expect(redactSecrets('saw api_key=pbsk_1 and token: "xyz"')).toBe(
      'saw api_key=[redacted] and token: "[redacted]"',
    );
  });

  it('never lets a bearer token through, whatever surrounds it (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.stringMatching(/^[A-Za-z0-9._~+/=-]{8,64}$/),
        fc.string(),
        (before, secret, after) => {
          expect(redactSecrets(`${before} Bearer ${secret} ${after}`)).not.toContain(`Bearer ${secret}`);
        },
      ),
    );
  });
});
