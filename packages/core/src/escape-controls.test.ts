import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControls } from './escape-controls.ts';

describe('escapeControls', () => {
  it('writes controls, separators and bidirectional marks as escapes, and leaves the rest as it is', () => {
    expect(escapeControls('bad\nrow\u001b[2J\u202eevil\u2028')).toBe(
      'bad\\u{a}row\\u{1b}[2J\\u{202e}evil\\u{2028}',
    );
    expect(escapeControls('café — ok \\u{a}')).toBe('café — ok \\u{a}');
  });

  it('leaves no line break or control character, and escaping twice changes nothing', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const once = escapeControls(text);
        expect(once).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
        expect(escapeControls(once)).toBe(once);
      }),
    );
  });
});
