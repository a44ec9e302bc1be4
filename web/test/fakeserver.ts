// An in-memory protocol v2 server behind a WebSocket-shaped class, for unit
// and component tests of the client, the view and the transcript. Browser
// tests run against the real `folio serve` instead.
import type { Entry } from '../src/chat/reconcile';

export interface FakeGroup {
  index: number;
  entries: Entry[];
}

/** makeGroups builds n display groups: user, reply, user, reply, … of about size bytes each. */
export function makeGroups(n: number, size = 200): FakeGroup[] {
  const pad = 'x'.repeat(Math.max(0, size - 80));
  return Array.from({ length: n }, (_, i) => ({
    index: i,
    entries:
      i % 2 === 0
        ? [{ id: `u${i}`, content: { kind: 'user', text: `question ${i} ${pad}` } }]
        : [{ id: `a${i}`, content: { kind: 'agent', markdown: `answer ${i} ${pad}` } }],
  }));
}

export class FakeServer {
  groups: FakeGroup[];
  generation = 1;
  /** The selected head a snapshot reports. */
  head = 'main';
  seq = 0;
  sockets: FakeSocket[] = [];
  /** Frames received, for assertions. */
  received: Record<string, unknown>[] = [];
  /** Return an error code to fail a page request, or undefined to answer. */
  failPage?: (frame: Record<string, unknown>) => string | undefined;
  /** Answer a command with this receipt (state, code), or an error frame ({ error: code }), instead of queued. */
  onCommand?: (frame: Record<string, unknown>) => { state: string; code?: string } | { error: string } | undefined;
  /** Answer an entry request with this frame (type entry or error); unset: not-found with rebuild. */
  onEntry?: (frame: Record<string, unknown>) => Record<string, unknown>;
  /** Hold answers until release() (delayed transport). */
  hold = false;
  private held: (() => void)[] = [];

  constructor(groups: FakeGroup[]) {
    this.groups = groups;
  }

  release(n = Infinity) {
    while (n-- > 0 && this.held.length) this.held.shift()!();
  }

  get heldCount() {
    return this.held.length;
  }

  /** The WebSocket class tests hand to the Client. */
  get WebSocket(): typeof WebSocket {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const server = this;
    return class extends FakeSocket {
      constructor() {
        super(server);
      }
    } as unknown as typeof WebSocket;
  }

  emit(frame: Record<string, unknown>) {
    for (const s of this.sockets) s.deliver(frame);
  }

  handle(sock: FakeSocket, f: Record<string, unknown>) {
    this.received.push(f);
    const answer = (a: Record<string, unknown>) => {
      const send = () => sock.deliver({ ...a, re: f.id });
      if (this.hold && (f.type === 'page' || f.type === 'entry')) this.held.push(send);
      else queueMicrotask(send);
    };
    switch (f.type) {
      case 'hello':
        return answer({ type: 'welcome', protocol: 2, connection: 'c1', limits: {} });
      case 'open':
        return answer({ type: 'snapshot', conversation: f.conversation, token: `s${this.generation}`, head: this.head, generation: this.generation, seq: this.seq, groups: this.groups.length, entries: 0, bytes: 0, graph: false });
      case 'page': {
        const code = this.failPage?.(f);
        if (code) return answer({ type: 'error', code, message: 'failed on purpose', rebuild: false });
        return answer({ type: 'page', token: f.token, ...this.page(String(f.anchor), String(f.direction), Number(f.budgetBytes)) });
      }
      case 'release':
        return answer({ type: 'released' });
      case 'entry':
        return answer(this.onEntry?.(f) ?? { type: 'error', code: 'not-found', message: 'no such entry', rebuild: true });
      default: {
        const r = this.onCommand?.(f) ?? { state: 'queued' };
        if ('error' in r) return answer({ type: 'error', code: r.error, message: 'refused on purpose', rebuild: false });
        return answer({ type: 'receipt', receipt: { commandId: f.commandId, conversation: f.conversation, kind: f.type, ...r } });
      }
    }
  }

  page(anchor: string, direction: string, budget: number) {
    const gs = this.groups;
    const size = (g: FakeGroup) => JSON.stringify(g.entries).length;
    const find = (id: string) => gs.findIndex((g) => g.entries.some((e) => e.id === id));
    const out: FakeGroup[] = [];
    const take = (from: number, step: number) => {
      let used = 0;
      for (let i = from; i >= 0 && i < gs.length; i += step) {
        if (out.length > 0 && used + size(gs[i]!) > budget) break;
        used += size(gs[i]!);
        out.push(gs[i]!);
      }
    };
    if (anchor === 'latest') take(gs.length - 1, -1);
    else if (anchor === 'earliest') take(0, 1);
    else if (direction === 'before') take(find(anchor) - 1, -1);
    else if (direction === 'after') take(find(anchor) + 1, 1);
    else {
      const at = find(anchor);
      out.push(gs[at]!);
      let used = size(gs[at]!);
      for (let k = 1; k < gs.length; k++) {
        for (const i of [at + k, at - k]) {
          if (i < 0 || i >= gs.length) continue;
          if (used + size(gs[i]!) > budget) return this.frame(out);
          used += size(gs[i]!);
          out.push(gs[i]!);
        }
      }
    }
    return this.frame(out);
  }

  private frame(out: FakeGroup[]) {
    out.sort((a, b) => a.index - b.index);
    const first = out[0]?.index;
    const last = out[out.length - 1]?.index;
    return {
      groups: out.map((g) => ({ index: g.index, bytes: JSON.stringify(g.entries).length, entries: g.entries })),
      first,
      last,
      hasMoreBefore: first !== undefined ? first > 0 : false,
      hasMoreAfter: last !== undefined ? last < this.groups.length - 1 : false,
    };
  }
}

export class FakeSocket {
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onclose: ((ev?: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  open = true;
  constructor(private readonly server: FakeServer) {
    server.sockets.push(this);
    queueMicrotask(() => this.onopen?.());
  }
  send(data: string) {
    if (this.open) this.server.handle(this, JSON.parse(data) as Record<string, unknown>);
  }
  deliver(frame: Record<string, unknown>) {
    if (this.open) this.onmessage?.({ data: JSON.stringify(frame) });
  }
  close() {
    this.closeWith(1005, '');
  }
  /** closeWith is the server closing the connection with a status and reason. */
  closeWith(code: number, reason: string) {
    if (!this.open) return;
    this.open = false;
    this.server.sockets = this.server.sockets.filter((s) => s !== this);
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
}
