import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixed, receiptLine, type TurnReceipt } from './receipt';

// The Go package `receipt` checks the same file (TestWebParityFixtures), so a
// line that passes here is the line the terminal prints for that receipt.
const fixtures = JSON.parse(readFileSync(resolve(__dirname, '../../../receipt/testdata/web-parity.json'), 'utf8')) as {
  name: string;
  receipt: TurnReceipt;
  line: string;
}[];

describe('receiptLine', () => {
  it('reads the shared fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });
  for (const f of fixtures) {
    it(`matches the terminal: ${f.name}`, () => {
      expect(receiptLine(f.receipt, true)).toBe(f.line);
    });
  }
  it('rounds exact ties to even, as Go does', () => {
    expect(fixed(0.25, 1)).toBe('0.2');
    expect(fixed(0.75, 1)).toBe('0.8');
    expect(fixed(12.25, 1)).toBe('12.2');
    expect(fixed(0.125, 2)).toBe('0.12');
    expect(fixed(1.05, 1)).toBe((1.05).toFixed(1));
  });
});
