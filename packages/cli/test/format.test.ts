import { describe, expect, it } from 'vitest';
import { jsonText, printable, text } from '../src/format.ts';
import { createLogger } from '../src/log.ts';

/** A service `detail` that tries to forge a table row, clear the screen and reverse the text. */
const HOSTILE = 'late\n| 99 | delivered\u001b[2J\u202eevil\r\u0085\u009b31m\u2028\u2066\u007f';

describe('text output of untrusted fields', () => {
  it('writes every control character (C0, DEL, C1, separators, bidi controls) as a visible escape', () => {
    const out = printable(HOSTILE);
    expect(out).toBe(
      'late\\u{a}| 99 | delivered\\u{1b}[2J\\u{202e}evil\\u{d}\\u{85}\\u{9b}31m\\u{2028}\\u{2066}\\u{7f}',
    );
    expect(out).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
  });

  it('leaves ordinary text, including non-ASCII letters and tabs written out, as it is, and escaping twice changes nothing', () => {
    expect(printable('Ad service answered 422: café ✓ 注文')).toBe('Ad service answered 422: café ✓ 注文');
    expect(printable(printable(HOSTILE))).toBe(printable(HOSTILE));
  });

  it('writes invisible and format characters as escapes too, so z\u200bw cannot pass for zw', () => {
    const samples: Array<[string, string]> = [
      ['z\u200bw', 'z\\u{200b}w'], // zero-width space
      ['a\u200cb\u200dc\u2060d', 'a\\u{200c}b\\u{200d}c\\u{2060}d'], // joiners, word joiner
      ['\ufeffbom', '\\u{feff}bom'], // byte-order mark
      ['soft\u00adhyphen', 'soft\\u{ad}hyphen'],
      ['no\u00a0break\u3000wide', 'no\\u{a0}break\\u{3000}wide'], // spaces that read as U+0020
      ['tag\u{e0041}', 'tag\\u{e0041}'], // a Unicode tag (invisible)
      ['hangul\u3164filler', 'hangul\\u{3164}filler'],
      ['lone\ud83dhalf', 'lone\\u{d83d}half'], // half of a surrogate pair
      ['non\ufffechar', 'non\\u{fffe}char'],
    ];
    for (const [raw, shown] of samples) {
      expect(printable(raw)).toBe(shown);
      expect(printable(shown)).toBe(shown);
      // JSON: the same value back, none of them raw.
      const json = jsonText({ raw });
      expect(JSON.parse(json)).toEqual({ raw });
      expect(json).toMatch(/^[\x20-\x7e]*$/);
    }
    // Visible text, emoji included, is left alone.
    expect(printable('shop-17 😀 café 注文')).toBe('shop-17 😀 café 注文');
  });

  it('escapes the interpolated values of a text template and keeps its own newlines', () => {
    expect(text`a ${'x\ny'} b\n`).toBe('a x\\u{a}y b\n');
  });

  it('keeps JSON output JSON: the same value, with no raw character a terminal acts on', () => {
    const value = { reason: HOSTILE };
    const out = jsonText(value);
    expect(JSON.parse(out)).toEqual(value);
    expect(out).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
  });

  it('escapes control characters in text log lines and keeps JSON log lines parseable', () => {
    const lines: string[] = [];
    createLogger('text', (line) => lines.push(line)).log('error', 'dead', { reason: HOSTILE });
    createLogger('json', (line) => lines.push(line)).log('error', 'dead', { reason: HOSTILE });
    const [textLine, jsonLine] = lines;
    expect(textLine?.slice(0, -1)).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
    expect(jsonLine?.slice(0, -1)).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
    expect(JSON.parse(jsonLine as string).reason).toBe(HOSTILE);
  });
});
