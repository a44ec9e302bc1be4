import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeServer } from '../../test/fakeserver';
import { ViewCache } from '../chat/cache';
import { TranscriptView } from '../chat/view';
import { LocaleContext } from '../i18n/catalog';
import { httpApi, type Api } from '../protocol/api';
import { Client } from '../protocol/client';
import { ChatPane } from './ChatPane';
import { ShareDialog } from './ShareDialog';

const settle = () => act(() => new Promise((r) => setTimeout(r, 20)));

/**
 * A share-link server in memory, behind fetch: the real httpApi talks to it,
 * so the paths, methods, the CSRF header and the answers' shapes are the
 * ones docs/protocol.md gives.
 */
function links() {
  let n = 0;
  const shares: { id: string; conversation: string; createdBy: string; createdAt: string }[] = [];
  const calls: { method: string; path: string; csrf: string | null }[] = [];
  let fail: { status: number; code: string; message: string } | undefined;
  const json = (status: number, body: unknown) => new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  const f = vi.fn(async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const path = new URL(url, 'http://x').pathname;
    calls.push({ method, path, csrf: (init?.headers as Record<string, string> | undefined)?.['X-CSRF-Token'] ?? null });
    if (fail) return json(fail.status, { error: { code: fail.code, message: fail.message } });
    let m = /^\/api\/v2\/conversations\/([^/]+)\/shares$/.exec(path);
    if (m && method === 'GET') return json(200, { shares: shares.filter((s) => s.conversation === m![1]) });
    if (m && method === 'POST') {
      const s = { id: `s-${++n}`, conversation: m[1]!, createdBy: 'alice', createdAt: '2026-12-03T20:00:00Z' };
      shares.push(s);
      return json(201, { ...s, path: `/s/token${n}` });
    }
    m = /^\/api\/v2\/conversations\/([^/]+)\/shares\/([^/]+)$/.exec(path);
    if (m && method === 'DELETE') {
      const i = shares.findIndex((s) => s.id === m![2]);
      if (i < 0) return json(404, { error: { code: 'not-found', message: 'no such link' } });
      shares.splice(i, 1);
      return new Response(null, { status: 204 });
    }
    return json(404, { error: { code: 'not-found', message: 'no route' } });
  });
  vi.stubGlobal('fetch', f);
  return { shares, calls, failWith: (e?: typeof fail) => (fail = e) };
}

describe('ShareDialog', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    document.cookie = 'folio_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT';
  });

  it('lists no links, makes one and shows its whole address once, lists it, and revokes it', async () => {
    document.cookie = 'folio_csrf=c5rf';
    const srv = links();
    render(<ShareDialog api={httpApi()} conversation="c1" origin="https://folio.example" onClose={() => {}} />);
    await settle();
    expect(screen.getByTestId('share-none').textContent).toBe('No links to this conversation.');

    fireEvent.click(screen.getByRole('button', { name: 'Create link' }));
    await settle();
    expect((screen.getByTestId('share-url') as HTMLInputElement).value).toBe('https://folio.example/s/token1');
    expect(srv.calls.find((c) => c.method === 'POST')).toEqual({ method: 'POST', path: '/api/v2/conversations/c1/shares', csrf: 'c5rf' });
    expect(screen.getByTestId('share-list').querySelectorAll('li')).toHaveLength(1);

    fireEvent.click(screen.getByRole('button', { name: 'Revoke' }));
    await settle();
    expect(srv.shares).toEqual([]);
    expect(srv.calls.find((c) => c.method === 'DELETE')).toEqual({ method: 'DELETE', path: '/api/v2/conversations/c1/shares/s-1', csrf: 'c5rf' });
    // The address shown once goes with its link.
    expect(screen.queryByTestId('share-url')).toBeNull();
    expect(screen.getByTestId('share-none')).toBeTruthy();
  });

  it('shows a refused request in the dialog, in German, with the server’s words', async () => {
    const srv = links();
    render(
      <LocaleContext.Provider value="de">
        <ShareDialog api={httpApi()} conversation="c1" origin="https://folio.example" onClose={() => {}} />
      </LocaleContext.Provider>,
    );
    await settle();
    expect(screen.getByTestId('share-none').textContent).toBe('Keine Links zu dieser Unterhaltung.');
    srv.failWith({ status: 404, code: 'not-found', message: 'share links need accounts' });
    fireEvent.click(screen.getByRole('button', { name: 'Link erstellen' }));
    await settle();
    const alert = screen.getByRole('alert');
    expect(alert.getAttribute('data-code')).toBe('not-found');
    expect(alert.textContent).toContain('share links need accounts');
    expect(screen.queryByTestId('share-url')).toBeNull();
  });

  it('Escape and the close button close it', async () => {
    links();
    const onClose = vi.fn();
    render(<ShareDialog api={httpApi()} conversation="c1" origin="https://folio.example" onClose={onClose} />);
    await settle();
    fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    fireEvent.click(screen.getByRole('button', { name: 'Close sharing' }));
    expect(onClose).toHaveBeenCalledTimes(2);
  });
});

describe('the Share button', () => {
  afterEach(() => vi.unstubAllGlobals());

  function pane(props: { canShare?: boolean; readOnly?: boolean }) {
    const server = new FakeServer([]);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const cache = new ViewCache((key) => new TranscriptView(client, key.split('|')[0]!));
    const api = { meta: vi.fn(async () => ({ id: 'c1', head: 'main' })), shares: vi.fn(async () => []) } as unknown as Api;
    return render(<ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} head={undefined} slot={0} onOpenList={() => {}} {...props} />);
  }

  it('is in the header of the owner’s conversation and opens the dialog', async () => {
    pane({ canShare: true });
    await settle();
    fireEvent.click(screen.getByRole('button', { name: 'Share' }));
    await settle();
    expect(screen.getByRole('dialog', { name: 'Read-only links' })).toBeTruthy();
  });

  it('is not there without accounts, nor through a share link', async () => {
    pane({});
    await settle();
    expect(screen.queryByRole('button', { name: 'Share' })).toBeNull();
    pane({ canShare: true, readOnly: true });
    await settle();
    expect(screen.queryByRole('button', { name: 'Share' })).toBeNull();
  });
});
