import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { generate, logOutPath, logSchemaPath, outPath, schemaPath } from '../../scripts/protocol-types.mjs';

describe('the frame types', () => {
  it('are generated from docs/schema/protocol.schema.json (run node scripts/protocol-types.mjs)', () => {
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
    expect(readFileSync(outPath, 'utf8')).toBe(generate(schema));
  });
});

describe('the entry types', () => {
  it('are generated from docs/schema/log-v3.schema.json (run node scripts/protocol-types.mjs)', () => {
    const schema = JSON.parse(readFileSync(logSchemaPath, 'utf8'));
    expect(readFileSync(logOutPath, 'utf8')).toBe(generate(schema, 'docs/schema/log-v3.schema.json'));
  });
});
