import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { schemaPath } from '../../scripts/protocol-types.mjs';
import { catalogs } from '../i18n/catalog';
import { advances, isFinal, isReturned } from './states';
import type { CommandState } from './frames';

const schemaStates = (): CommandState[] => JSON.parse(readFileSync(schemaPath, 'utf8')).$defs.commandState.enum;

describe('command states', () => {
  it('are the schema’s one vocabulary, with no other names in the catalogs', () => {
    const states = new Set<string>(schemaStates());
    for (const c of Object.values(catalogs)) {
      for (const k of Object.keys(c.queueState)) expect(states.has(k), k).toBe(true);
    }
  });

  it('never move back: a command answer after a later event keeps the later state', () => {
    expect(advances('running', 'queued')).toBe(false);
    expect(advances('queued', 'running')).toBe(true);
    expect(advances('running', 'failed')).toBe(true);
    expect(advances('done', 'running')).toBe(false);
    expect(advances('uncertain', 'queued')).toBe(true);
  });

  it('are final exactly when the engine can change them no more', () => {
    const final = schemaStates().filter(isFinal);
    expect(final.sort()).toEqual(['applied', 'done', 'failed', 'rejected', 'removed', 'stopped']);
    expect(schemaStates().filter(isReturned).sort()).toEqual(['rejected', 'removed']);
  });
});
