import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { generate, outPath, schemaPath } from '../../scripts/protocol-types.mjs';

describe('the frame types', () => {
  it('are generated from docs/schema/protocol.schema.json (run node scripts/protocol-types.mjs)', () => {
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
    expect(readFileSync(outPath, 'utf8')).toBe(generate(schema));
  });
});
