// The protocol v2 client (docs/protocol.md): one WebSocket per tab, a hello
// handshake, requests matched to answers by ID, live events fanned out to
// listeners, and reconnection with exponential backoff. When the browser says
// the network is back (the `online` event) it reconnects at once instead of
// sitting out a retry delay computed while offline.

import type { ClientFrame, EntryAnswer, Ok, Page, Pong, ReceiptAnswer, Released, ServerFrame, Snapshot, Welcome } from './frames';

export type { ServerFrame };

/** The answer each request gets (docs/protocol.md); an error frame rejects instead. */
export interface Answers {
  hello: Welcome;
  ping: Pong;
  open: Snapshot;
  page: Page;
  release: Released;
  unfollow: Ok;
  entry: EntryAnswer;
  send: ReceiptAnswer;
  steer: ReceiptAnswer;
  stop: ReceiptAnswer;
  approve: ReceiptAnswer;
  retry: ReceiptAnswer;
  edit: ReceiptAnswer;
  'select-branch': ReceiptAnswer;
  dismiss: ReceiptAnswer;
}

/** An answer frame: any frame that names the request it answers. */
type AnswerFrame = Extract<ServerFrame, { re: string }>;

export const PROTOCOL_VERSION = 4;

/** An `error` frame turned into an exception. */
export class ProtocolError extends Error {
  constructor(
    readonly code: string,
    /** The server's message, without the code. */
    readonly detail: string,
    readonly rebuild: boolean,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ProtocolError';
  }
}

/** The connection went away before the answer arrived. */
export class DisconnectedError extends Error {
  constructor() {
    super('disconnected');
    this.name = 'DisconnectedError';
  }
}

export type Status = 'connecting' | 'open' | 'closed';

export interface ClientOptions {
  /** ws:// or wss:// URL of /api/v2/ws. */
  url: string;
  /** Subprotocols to offer: wsProtocols(token) from ./token. */
  protocols?: string[];
  /** For tests: a WebSocket constructor. */
  WebSocket?: typeof WebSocket;
  /**
   * Told when the server closes the connection with an application status
   * (4000–4999) and stops it for good: 4401 (reason sign-in-required) when
   * the session ended, which reconnecting cannot mend.
   */
  onEnded?: (status: number, reason: string) => void;
  /** First reconnect delay; doubles per failure up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** The close status of a connection whose session ended (reason sign-in-required). */
export const SESSION_ENDED = 4401;

type Pending = { resolve: (f: AnswerFrame) => void; reject: (e: Error) => void };

/**
 * Client owns the tab's WebSocket. request() sends a frame with a fresh ID and
 * resolves with its answer (or rejects with ProtocolError / DisconnectedError).
 * Listeners get every event frame and every status change; after a reconnect
 * each view re-opens its snapshot with what it last applied.
 */
export class Client {
  status: Status = 'closed';
  /** How many times the connection has opened: views compare it to notice a reconnect. */
  connects = 0;
  private ws?: WebSocket;
  private next = 0;
  private pending = new Map<string, Pending>();
  private events = new Set<(f: ServerFrame) => void>();
  private statuses = new Set<(s: Status) => void>();
  private failures = 0;
  private timer?: ReturnType<typeof setTimeout>;
  private closed = false;
  private readonly WS: typeof WebSocket;
  private readonly onOnline = () => this.reconnectNow();

  constructor(private readonly opts: ClientOptions) {
    this.WS = opts.WebSocket ?? WebSocket;
    globalThis.addEventListener?.('online', this.onOnline);
    this.connect();
  }

  onEvent(fn: (f: ServerFrame) => void): () => void {
    this.events.add(fn);
    return () => this.events.delete(fn);
  }

  onStatus(fn: (s: Status) => void): () => void {
    this.statuses.add(fn);
    return () => this.statuses.delete(fn);
  }

  /** request sends frame (without id: the client numbers it) and waits for its answer. */
  request<F extends ClientFrame>(frame: F): Promise<Answers[F['type']]> {
    if (this.status !== 'open' || !this.ws) return Promise.reject(new DisconnectedError());
    const id = `r${++this.next}`;
    return new Promise((resolve, reject) => {
      // The server answers each request type with its one answer frame (the
      // protocol schema pairs them), so the answer is that frame's type.
      this.pending.set(id, { resolve: (f) => resolve(f as Answers[F['type']]), reject });
      this.ws!.send(JSON.stringify({ ...frame, id }));
    });
  }

  /** reconnectNow drops any waiting retry delay and connects at once. */
  reconnectNow(): void {
    if (this.closed || this.status !== 'closed') return;
    clearTimeout(this.timer);
    this.failures = 0;
    this.connect();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    globalThis.removeEventListener?.('online', this.onOnline);
    this.ws?.close();
  }

  private setStatus(s: Status) {
    this.status = s;
    for (const fn of this.statuses) fn(s);
  }

  private connect() {
    this.setStatus('connecting');
    let ws: WebSocket;
    try {
      ws = new this.WS(this.opts.url, this.opts.protocols);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: 'hello', id: 'hello', protocol: PROTOCOL_VERSION, client: 'folio-web/0.2' }));
    };
    ws.onmessage = (m) => {
      let f: ServerFrame;
      try {
        f = JSON.parse(String(m.data)) as ServerFrame;
      } catch {
        return;
      }
      const re = 're' in f ? f.re : undefined;
      if (re === 'hello') {
        if (f.type === 'welcome') {
          this.failures = 0;
          this.connects++;
          this.setStatus('open');
        }
        return;
      }
      if (re !== undefined) {
        const p = this.pending.get(re);
        if (!p) return;
        this.pending.delete(re);
        if (f.type === 'error') p.reject(new ProtocolError(f.code, f.message, f.rebuild));
        else p.resolve(f as AnswerFrame);
        return;
      }
      for (const fn of this.events) fn(f);
    };
    ws.onclose = (ev?: CloseEvent) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      for (const p of this.pending.values()) p.reject(new DisconnectedError());
      this.pending.clear();
      // The session ended (signed out, expired): a new connection would be
      // refused the same way, so the app is told instead.
      if (ev?.code === SESSION_ENDED) {
        this.closed = true;
        this.setStatus('closed');
        this.opts.onEnded?.(ev.code, ev.reason);
        return;
      }
      this.setStatus('closed');
      if (!this.closed) this.scheduleReconnect();
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private scheduleReconnect() {
    const base = this.opts.baseDelayMs ?? 250;
    const max = this.opts.maxDelayMs ?? 10_000;
    const delay = Math.min(max, base * 2 ** this.failures);
    this.failures++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }
}

/** wsURL derives the WebSocket URL from the page's address (the token goes in wsProtocols, never the URL). */
export function wsURL(loc: Location): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  const base = new URL('/api/v2/ws', loc.href.replace(/#.*$/, ''));
  return `${scheme}//${base.host}${base.pathname}`;
}
