/**
 * payloadBytesOver skips counting a body that cannot reach the limit: it must answer exactly what counting does.
 */
import fc from 'fast-check';
import { payloadBytes, payloadBytesOver } from '../../lib/http/payload-limits';

describe('payloadBytesOver', () => {
  const exact = (value: { body?: string | null }, limit: number) => {
    const bytes = payloadBytes(value);
    return bytes > limit ? bytes : undefined;
  };

  test('answers as payloadBytes does, for any body and any limit around its size', () => {
    const body = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      // quotes, backslashes, control characters and lone surrogates: the most escaping per code unit
      fc
        .array(fc.constantFrom('"', '\\', '\u0001', '\n', '\ud800', '\udc00', 'é', '€', '😀', 'a'), { maxLength: 200 })
        .map((a) => a.join('')),
    );
    fc.assert(
      fc.property(body, fc.integer({ min: -50, max: 50 }), fc.integer({ min: 0, max: 6 }), (b, delta, factor) => {
        const value = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: b };
        const size = payloadBytes(value);
        for (const limit of [size + delta, size * factor, 0, 6 * b.length + 100]) {
          expect(payloadBytesOver(value, limit)).toBe(exact(value, limit));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('a body that is not a string is counted', () => {
    for (const body of [null, undefined]) {
      const value = { statusCode: 204, body };
      expect(payloadBytesOver(value, 0)).toBe(payloadBytes(value));
      expect(payloadBytesOver(value, 1000)).toBeUndefined();
    }
  });
});
