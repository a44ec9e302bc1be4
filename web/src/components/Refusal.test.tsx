import { fireEvent, render } from '@testing-library/react';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogs, LocaleContext, refusalText, type Locale } from '../i18n/catalog';
import { ERROR_CODES } from '../protocol/errors';
import { MissingConversation, RefusalNotice, RefusedDraft, TokenPage } from './Refusal';

/** The codes of the "Error codes" table in docs/protocol.md (a cell may list several). */
function documentedCodes(): string[] {
  const doc = readFileSync(join(__dirname, '../../../docs/protocol.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Error codes'));
  const rows = table.slice(0, table.indexOf('\n## ')).split('\n').filter((l) => l.startsWith('| `'));
  return rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!));
}

describe('refusals', () => {
  it('the list of codes holds every error code docs/protocol.md names', () => {
    const doc = documentedCodes();
    expect(doc.length).toBeGreaterThan(25);
    expect(doc.filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it.each(Object.keys(catalogs) as Locale[])('every code has its own sentence in %s, rendered visibly', (locale) => {
    for (const code of ERROR_CODES) {
      const text = refusalText(code, locale);
      expect(text, code).not.toBe(catalogs[locale].refusalUnknown(code));
      expect(text.length, code).toBeGreaterThan(10);
      const { container, unmount } = render(
        <LocaleContext.Provider value={locale}>
          <RefusalNotice refusal={{ code, reason: `${code}: <b>the server's words</b>` }} />
        </LocaleContext.Provider>,
      );
      const alert = container.querySelector('[role="alert"]')!;
      expect(alert.getAttribute('data-code')).toBe(code);
      expect(alert.querySelector('.refusal-text')!.textContent).toBe(text);
      // The server's words are text, never markup.
      expect(alert.querySelector('b')).toBeNull();
      expect(alert.querySelector('.failure-detail-text')!.textContent).toBe(`${code}: <b>the server's words</b>`);
      unmount();
    }
  });

  it('German says every code differently from English', () => {
    for (const code of ERROR_CODES) expect(refusalText(code, 'de'), code).not.toBe(refusalText(code, 'en'));
  });

  it('an unknown code still says something', () => {
    expect(refusalText('quota-v9', 'en')).toBe('The server refused this (quota-v9).');
    expect(refusalText('toString', 'en')).toBe('The server refused this (toString).');
  });

  it('a refused message offers Send again and Edit', () => {
    const calls: string[] = [];
    const { getByRole, getByText } = render(<RefusedDraft text="hello" refusal={{ code: 'locked', reason: 'locked: held by folio process 7' }} onSendAgain={() => calls.push('again')} onTakeBack={() => calls.push('back')} />);
    expect(getByText('hello')).toBeTruthy();
    expect(getByText(/Another folio process is writing this conversation/)).toBeTruthy();
    fireEvent.click(getByRole('button', { name: 'Send again' }));
    fireEvent.click(getByRole('button', { name: 'Edit' }));
    expect(calls).toEqual(['again', 'back']);
  });

  it('a missing conversation links to the list; the token page says where the address comes from', () => {
    let shown = 0;
    const m = render(<MissingConversation id="nope" onShowList={() => shown++} />);
    expect(m.getByText('No such conversation')).toBeTruthy();
    fireEvent.click(m.getByRole('button', { name: 'Show conversations' }));
    expect(shown).toBe(1);
    m.unmount();
    const p = render(<TokenPage origin="http://127.0.0.1:7878" hadToken />);
    expect(p.container.textContent).toContain('folio serve');
    expect(p.container.textContent).toContain('open http://127.0.0.1:7878/#token=…');
    expect(p.container.textContent).toContain('earlier run');
  });
});
