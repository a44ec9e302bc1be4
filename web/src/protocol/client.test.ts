import { describe, expect, it, vi } from 'vitest';
import { FakeServer } from '../../test/fakeserver';
import { Client, SESSION_ENDED } from './client';

const tick = () => new Promise((r) => setTimeout(r, 0));

async function opened(c: Client) {
  for (let i = 0; i < 50 && c.status !== 'open'; i++) await tick();
  expect(c.status).toBe('open');
}

describe('Client closes', () => {
  it('stops and tells the app when the session ended (4401)', async () => {
    const server = new FakeServer([]);
    const onEnded = vi.fn();
    const c = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket, onEnded, baseDelayMs: 1 });
    await opened(c);
    server.sockets[0]!.closeWith(SESSION_ENDED, 'sign-in-required');
    for (let i = 0; i < 20; i++) await tick();
    expect(onEnded).toHaveBeenCalledWith(SESSION_ENDED, 'sign-in-required');
    expect(c.status).toBe('closed');
    expect(server.sockets).toHaveLength(0); // no reconnect
  });

  it('reconnects after any other close', async () => {
    const server = new FakeServer([]);
    const onEnded = vi.fn();
    const c = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket, onEnded, baseDelayMs: 1 });
    await opened(c);
    server.sockets[0]!.closeWith(1006, '');
    await new Promise((r) => setTimeout(r, 20));
    await opened(c);
    expect(onEnded).not.toHaveBeenCalled();
    c.close();
  });
});
