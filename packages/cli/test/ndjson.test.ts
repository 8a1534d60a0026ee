import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_LENGTH, parseClickedAt, parseJobLine, readLines, TOO_LONG } from '../src/ndjson.ts';

const text = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
const micros = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
// 1970..2100, whole milliseconds.
const epochMs = fc.integer({ min: 0, max: 4_102_444_800_000 });

const confirmLine = fc.record({
  kind: fc.constant('confirm' as const),
  click_token: text,
  order_id: text,
  value_micros: micros,
  clicked_at: epochMs.map((ms) => new Date(ms).toISOString()),
});
const refundLine = fc.record(
  { kind: fc.constant('refund' as const), order_id: text, campaign_id: text },
  { requiredKeys: ['kind', 'order_id'] },
);

describe('parseJobLine', () => {
  it('reads back every field of any well-formed confirm line', () => {
    fc.assert(
      fc.property(confirmLine, (line) => {
        const parsed = parseJobLine(JSON.stringify(line));
        expect(parsed).toEqual({
          ok: true,
          job: {
            kind: 'confirm',
            input: {
              orderId: line.order_id,
              valueMicros: line.value_micros,
              click: { token: line.click_token, clickedAt: Date.parse(line.clicked_at) },
            },
          },
        });
      }),
    );
  });

  it('reads back any well-formed refund line, with or without a campaign', () => {
    fc.assert(
      fc.property(refundLine, (line) => {
        const parsed = parseJobLine(JSON.stringify(line));
        const input =
          line.campaign_id === undefined
            ? { orderId: line.order_id }
            : { orderId: line.order_id, campaignId: line.campaign_id };
        expect(parsed).toEqual({ ok: true, job: { kind: 'refund', input } });
      }),
    );
  });

  it('never throws on arbitrary text and reports non-JSON lines without a field', () => {
    fc.assert(
      fc.property(fc.string(), (line) => {
        const parsed = parseJobLine(line);
        if (parsed.ok === false && parsed.error.field === null) expect(parsed.error.message).toMatch(/JSON/);
      }),
    );
  });

  it('names the field when one field of a confirm line has a wrong value', () => {
    const wrong = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.constant(''),
      fc.constant('  '),
      fc.double(),
      fc.constant([]),
      fc.constant({}),
    );
    fc.assert(
      fc.property(
        confirmLine,
        fc.constantFrom('click_token', 'order_id', 'value_micros', 'clicked_at'),
        wrong,
        (line, field, value) => {
          // A number is a valid clicked_at (epoch ms) when it is a non-negative integer; doubles mostly are not.
          fc.pre(
            !(
              field === 'clicked_at' &&
              typeof value === 'number' &&
              Number.isSafeInteger(value) &&
              value >= 0
            ),
          );
          fc.pre(
            !(
              field === 'value_micros' &&
              typeof value === 'number' &&
              Number.isSafeInteger(value) &&
              value >= 0
            ),
          );
          const parsed = parseJobLine(JSON.stringify({ ...line, [field]: value }));
          expect(parsed).toMatchObject({ ok: false, error: { field } });
        },
      ),
    );
  });

  it('rejects value_micros that is negative, fractional, beyond 2^53 or a string', () => {
    fc.assert(
      fc.property(
        confirmLine,
        fc.oneof(
          fc.integer({ max: -1 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
          fc.constant(2 ** 53),
          micros.map(String),
        ),
        (line, value) => {
          expect(parseJobLine(JSON.stringify({ ...line, value_micros: value }))).toMatchObject({
            ok: false,
            error: { field: 'value_micros' },
          });
        },
      ),
    );
  });

  it('names an unknown key instead of ignoring it', () => {
    fc.assert(
      fc.property(
        fc.oneof(confirmLine, refundLine),
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter(
            (k) =>
              ![
                'kind',
                'account',
                'click_token',
                'order_id',
                'value_micros',
                'clicked_at',
                'campaign_id',
                '__proto__',
              ].includes(k),
          ),
        (line, key) => {
          expect(parseJobLine(JSON.stringify({ ...line, [key]: 1 }))).toMatchObject({
            ok: false,
            error: { field: key },
          });
        },
      ),
    );
  });

  it('reads an account on either kind of line; absent or null is no account', () => {
    const confirm = {
      kind: 'confirm',
      click_token: 't',
      order_id: '1001',
      value_micros: 5,
      clicked_at: '2026-01-02T03:04:05Z',
    };
    expect(parseJobLine(JSON.stringify({ ...confirm, account: 'shop-17' }))).toMatchObject({
      ok: true,
      job: { kind: 'confirm', input: { orderId: '1001', account: 'shop-17', valueMicros: 5 } },
    });
    expect(
      parseJobLine(
        JSON.stringify({ kind: 'refund', order_id: '1001', account: 'shop-17', campaign_id: 'cmp_1' }),
      ),
    ).toEqual({
      ok: true,
      job: { kind: 'refund', input: { orderId: '1001', account: 'shop-17', campaignId: 'cmp_1' } },
    });
    for (const line of [{ ...confirm }, { ...confirm, account: null }]) {
      const parsed = parseJobLine(JSON.stringify(line));
      expect(parsed.ok).toBe(true);
      if (parsed.ok === true) expect(parsed.job.input).not.toHaveProperty('account');
    }
  });

  it('names account when it is not a valid account (core rules: a non-empty string, no control characters)', () => {
    for (const account of ['', '   ', 17, ['a'], 'a\u0007b', 'x'.repeat(201)]) {
      const parsed = parseJobLine(JSON.stringify({ kind: 'refund', order_id: 'o', account }));
      expect(parsed).toMatchObject({ ok: false, error: { field: 'account' } });
    }
    expect(parseJobLine('{"kind":"refund","order_id":"o","account":""}')).toMatchObject({
      error: { message: expect.stringMatching(/empty/) },
    });
  });

  it('refuses a kind other than confirm or refund and a missing kind', () => {
    expect(parseJobLine('{"order_id":"o"}')).toMatchObject({ ok: false, error: { field: 'kind' } });
    expect(parseJobLine('{"kind":"charge","order_id":"o"}')).toMatchObject({
      ok: false,
      error: { field: 'kind' },
    });
  });

  it('refuses JSON that is not an object', () => {
    for (const line of ['[]', '1', '"x"', 'null', 'true']) {
      expect(parseJobLine(line)).toEqual({ ok: false, error: { field: null, message: 'not a JSON object' } });
    }
  });

  it('skips blank lines rather than counting them as bad', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[ \t\r]*$/), (line) => {
        expect(parseJobLine(line)).toEqual({ ok: 'skip' });
      }),
    );
  });
});

describe('parseClickedAt', () => {
  it('accepts ISO times with Z or an offset, and epoch milliseconds, to the same instant', () => {
    fc.assert(
      fc.property(epochMs, fc.integer({ min: -12, max: 14 }), (ms, offsetHours) => {
        const shifted = new Date(ms + offsetHours * 3_600_000).toISOString().slice(0, 23);
        const sign = offsetHours < 0 ? '-' : '+';
        const zone = `${sign}${String(Math.abs(offsetHours)).padStart(2, '0')}:00`;
        expect(parseClickedAt(`${shifted}${zone}`)).toBe(ms);
        expect(parseClickedAt(new Date(ms).toISOString())).toBe(ms);
        expect(parseClickedAt(ms)).toBe(ms);
      }),
    );
  });

  it('refuses a time without a zone, which would depend on the machine', () => {
    expect(parseClickedAt('2026-01-02T03:04:05')).toBeNull();
    expect(parseClickedAt('2026-01-02')).toBeNull();
    expect(parseClickedAt('yesterday')).toBeNull();
    expect(parseClickedAt(-1)).toBeNull();
    expect(parseClickedAt(1.5)).toBeNull();
  });

  it('refuses an impossible date instead of rolling it into the next month', () => {
    expect(parseClickedAt('2026-02-30T00:00:00Z')).toBeNull();
    expect(parseClickedAt('2026-04-31T00:00:00Z')).toBeNull();
    const line = JSON.stringify({
      kind: 'confirm',
      click_token: 'tok_abcdefgh',
      order_id: 'o1',
      value_micros: 1,
      clicked_at: '2026-02-30T00:00:00Z',
    });
    expect(parseJobLine(line)).toMatchObject({ ok: false, error: { field: 'clicked_at' } });
  });
});

describe('readLines', () => {
  const collect = async (chunks: string[]) => {
    const out: Array<string | typeof TOO_LONG> = [];
    for await (const line of readLines(Readable.from(chunks))) out.push(line);
    return out;
  };

  it('yields the same lines however the input is cut into chunks, with \\n or \\r\\n endings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')),
          { maxLength: 20 },
        ),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        async (lines, eol, trailing, cuts) => {
          const text = lines.join(eol) + (trailing && lines.length > 0 ? eol : '');
          const chunks: string[] = [];
          for (let at = 0, i = 0; at < text.length; i++) {
            const size = cuts[i % cuts.length] as number;
            chunks.push(text.slice(at, at + size));
            at += size;
          }
          // Line semantics: a final line ending adds no empty line; an empty input has no lines.
          const expected = text === '' ? [] : text.split(eol);
          if (text.endsWith(eol)) expected.pop();
          expect(await collect(chunks)).toEqual(expected);
        },
      ),
    );
  });

  it('replaces a line longer than the limit by a marker, without holding it, and goes on', async () => {
    const long = 'x'.repeat(MAX_LINE_LENGTH + 10);
    const chunks = ['{"a":1}\n', ...long.match(/.{1,65536}/gs)!, '\n{"b":2}\n'];
    expect(await collect(chunks)).toEqual(['{"a":1}', TOO_LONG, '{"b":2}']);
  });
});
