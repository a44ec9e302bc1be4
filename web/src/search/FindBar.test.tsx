import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocaleContext } from '../i18n/catalog';
import { FindBar } from './FindBar';

function answer(entries: string[]) {
  return { query: 'q', hits: entries.map((e) => ({ conversation: 'big', entry: e, role: 'answer', snippet: [{ text: 'x', hit: true }], score: 0 })) };
}

function stub(body: unknown, status = 200) {
  const f = vi.fn(async (_url: string) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } }));
  vi.stubGlobal('fetch', f);
  return f;
}

const settle = () => act(() => new Promise((r) => setTimeout(r, 50)));

describe('FindBar', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks for the conversation’s newest hits, goes to the newest, and steps older and newer in German', async () => {
    const f = stub(answer(['e9', 'e5', 'e1']));
    const onGo = vi.fn();
    const { rerender } = render(
      <LocaleContext.Provider value="de">
        <FindBar conversation="big" query="537 conversation:other" at={undefined} onQuery={() => {}} onGo={onGo} onClose={() => {}} />
      </LocaleContext.Provider>,
    );
    await settle();
    const url = new URL(f.mock.calls[0]![0], 'http://x');
    expect(url.searchParams.get('q')).toBe('537 conversation:big');
    expect(url.searchParams.get('order')).toBe('newest');
    expect(url.searchParams.get('limit')).toBe('10000');
    expect(onGo).toHaveBeenLastCalledWith('e9', ['x']);
    const at = (e: string | undefined) =>
      rerender(
        <LocaleContext.Provider value="de">
          <FindBar conversation="big" query="537 conversation:other" at={e} onQuery={() => {}} onGo={onGo} onClose={() => {}} />
        </LocaleContext.Provider>,
      );
    at('e9');
    expect(screen.getByTestId('find-status').textContent).toBe('1 von 3');
    expect((screen.getByRole('button', { name: 'Vorheriger Treffer (neuer)' }) as HTMLButtonElement).disabled).toBe(true);
    const field = screen.getByRole('searchbox', { name: 'In dieser Unterhaltung suchen' });
    fireEvent.keyDown(field, { key: 'Enter' });
    expect(onGo).toHaveBeenLastCalledWith('e5', ['x']);
    at('e5');
    expect(screen.getByTestId('find-status').textContent).toBe('2 von 3');
    fireEvent.keyDown(field, { key: 'Enter', shiftKey: true });
    expect(onGo).toHaveBeenLastCalledWith('e9', ['x']);
    fireEvent.click(screen.getByRole('button', { name: 'Nächster Treffer (älter)' }));
    expect(onGo).toHaveBeenLastCalledWith('e1', ['x']);
    at('e1');
    expect(screen.getByTestId('find-status').textContent).toBe('3 von 3');
    expect((screen.getByRole('button', { name: 'Nächster Treffer (älter)' }) as HTMLButtonElement).disabled).toBe(true);
    expect(f).toHaveBeenCalledTimes(1);
  });

  it('stays at a hit a search opened, and a changed query is handed up', async () => {
    stub(answer(['e9', 'e5', 'e1']));
    const onGo = vi.fn();
    const onQuery = vi.fn();
    render(<FindBar conversation="big" query="537" at="e5" onQuery={onQuery} onGo={onGo} onClose={() => {}} />);
    await settle();
    expect(onGo).not.toHaveBeenCalled();
    expect(screen.getByTestId('find-status').textContent).toBe('2 of 3');
    const field = screen.getByRole('searchbox', { name: 'Find in this conversation' });
    fireEvent.change(field, { target: { value: 'fsync' } });
    fireEvent.keyDown(field, { key: 'Enter' });
    expect(onQuery).toHaveBeenCalledWith('fsync');
    expect(onGo).not.toHaveBeenCalled();
  });

  it('says when nothing matched, and what is wrong with a malformed query', async () => {
    stub(answer([]));
    const { unmount } = render(<FindBar conversation="big" query="nothing" at={undefined} onQuery={() => {}} onGo={() => {}} onClose={() => {}} />);
    await settle();
    expect(screen.getByTestId('find-status').textContent).toBe('No matches');
    unmount();
    stub({ error: { code: 'bad-query', message: 'search: the quote at 1 is not closed' } }, 400);
    const onClose = vi.fn();
    render(<FindBar conversation="big" query={'"open'} at={undefined} onQuery={() => {}} onGo={() => {}} onClose={onClose} />);
    await settle();
    expect(screen.getByRole('alert').textContent).toContain('quote at 1 is not closed');
    fireEvent.keyDown(screen.getByRole('searchbox'), { key: 'Escape' });
    expect(onClose).toHaveBeenCalled();
  });
});
