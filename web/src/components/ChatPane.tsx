import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { BranchController } from '../chat/branches';
import type { ViewCache } from '../chat/cache';
import type { ConversationMeta } from '../chat/types';
import type { TranscriptView } from '../chat/view';
import type { Api, ModelInfo } from '../protocol/api';
import { ProtocolError, type Client } from '../protocol/client';
import { ArtifactReaderContext, type ArtifactReader } from './ArtifactOutput';
import { BranchContext, BranchNotice, useBranches } from './BranchControls';
import { Composer } from './Composer';
import { GraphPanel } from './GraphPanel';
import { Transcript } from './Transcript';

/** A message the user sent, as the pane tracks its delivery. */
export interface Outgoing {
  commandId: string;
  kind: 'send' | 'steer';
  text: string;
  attachments?: string[];
  /** The model this send switches to (a name from the model list). */
  model?: string;
  /** pending: sent, no answer; uncertain: the connection dropped before the answer. */
  state: 'pending' | 'uncertain' | 'queued' | 'running' | 'done' | 'rejected';
  code?: string;
}

const newId = () => (globalThis.crypto?.randomUUID?.() ?? `k-${Date.now()}-${Math.random().toString(36).slice(2)}`);

export interface ChatPaneProps {
  client: Client;
  api: Api;
  cache: ViewCache<TranscriptView>;
  conversation: ConversationMeta | undefined;
  /** Unused: branch navigation reads the conversation's metadata itself (BranchController). */
  branches?: { head: string; label: string }[];
  head: string | undefined;
  /** Unused (see branches). */
  onHead?: (head: string) => void;
  slot: number;
  onOpenList: () => void;
  onClose?: () => void;
}

/** The pane's body for one view: the transcript, queue and composer. */
function PaneBody({ client, api, cache, conversation, viewKey, view }: ChatPaneProps & { viewKey: string; view: TranscriptView; conversation: ConversationMeta }) {
  const state = useSyncExternalStore(view.subscribe, view.getState);
  const [draft, setDraft] = useState('');
  const [outgoing, setOutgoing] = useState<Outgoing[]>([]);
  const [steerDraft, setSteerDraft] = useState<string | undefined>();
  const [models, setModels] = useState<ModelInfo[]>([]);
  // current: the model the server says the next turn runs on; chosen: the
  // user's pick, sent with the next send (the server then remembers it).
  const [current, setCurrent] = useState<string | undefined>();
  const [chosen, setChosen] = useState<string | undefined>();
  const [modelsAsked, setModelsAsked] = useState(0);
  // forget: the pick was refused (the server's list changed): show the server's current model again.
  const refreshModels = (forget: boolean) => {
    if (forget) setChosen(undefined);
    setModelsAsked((n) => n + 1);
  };
  useEffect(() => {
    let live = true;
    // An Api without a model list (a read-only embedding) shows no picker.
    if (!api.models) return;
    api.models(conversation.id).then(
      (l) => {
        if (!live) return;
        setModels(l.models);
        setCurrent(l.current);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [api, conversation.id, modelsAsked]);
  const readArtifact = useMemo<ArtifactReader | undefined>(
    () => (api.artifact ? (ref, offset, length) => api.artifact(conversation.id, ref, offset, length) : undefined),
    [api, conversation.id],
  );
  const heights = cache.heights.get(viewKey) ?? new Map<string, number>();
  if (!cache.heights.has(viewKey)) cache.heights.set(viewKey, heights);

  const update = (commandId: string, patch: Partial<Outgoing>) =>
    setOutgoing((list) => list.map((o) => (o.commandId === commandId ? { ...o, ...patch } : o)));

  const deliver = async (o: Outgoing) => {
    const frame: Record<string, unknown> = { type: o.kind, conversation: conversation.id, commandId: o.commandId, text: o.text };
    if (o.kind === 'send' && o.attachments?.length) frame.attachments = o.attachments;
    if (o.kind === 'send' && o.model) frame.model = o.model;
    try {
      const r = (await client.request(frame)).receipt as { state: Outgoing['state']; code?: string };
      if (r.state === 'rejected') {
        setOutgoing((list) => list.filter((x) => x.commandId !== o.commandId));
        // A definitive rejection gives the text back as an ordinary draft; a
        // steer the stop cancelled stays a draft with an explicit Send.
        if (o.kind === 'steer' && r.code === 'cancelled') setSteerDraft(o.text);
        else setDraft(o.text);
      } else update(o.commandId, { state: r.state, code: r.code });
    } catch (e) {
      if (e instanceof ProtocolError) {
        // The server refused the frame itself (an unknown model, text over
        // the limit): nothing happened, so the text is the draft again.
        setOutgoing((list) => list.filter((x) => x.commandId !== o.commandId));
        setDraft(o.text);
        if (e.code === 'unknown-model') refreshModels(true);
        return;
      }
      // Transport failure: delivery is uncertain. The same command ID is
      // resent on reconnect (idempotent); the text is never sent under a new ID.
      update(o.commandId, { state: 'uncertain' });
    }
  };

  useEffect(
    () =>
      client.onStatus((s) => {
        if (s !== 'open') return;
        setOutgoing((list) => {
          for (const o of list) if (o.state === 'uncertain') void deliver(o);
          return list;
        });
      }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [client, conversation.id],
  );

  useEffect(
    () =>
      client.onEvent((f) => {
        if (f.type !== 'event' || f.conversation !== conversation.id || f.op !== 'receipt') return;
        const r = f.receipt as { commandId: string; state: Outgoing['state']; code?: string };
        update(r.commandId, { state: r.state, code: r.code });
      }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [client, conversation.id],
  );

  const send = async (text: string, files: File[]) => {
    setDraft('');
    const o: Outgoing = { commandId: newId(), kind: 'send', text, state: 'pending' };
    if (chosen !== undefined && chosen !== current) {
      o.model = chosen;
      setCurrent(chosen);
    }
    setOutgoing((l) => [...l, o]);
    if (files.length) {
      try {
        o.attachments = (await Promise.all(files.map((f) => api.upload(conversation.id, f)))).map((a) => a.id);
      } catch {
        setOutgoing((l) => l.filter((x) => x.commandId !== o.commandId));
        setDraft(text);
        return;
      }
    }
    await deliver(o);
  };
  const steer = (text: string) => {
    setDraft('');
    setSteerDraft(undefined);
    const o: Outgoing = { commandId: newId(), kind: 'steer', text, state: 'pending' };
    setOutgoing((l) => [...l, o]);
    void deliver(o);
  };
  const stop = () => {
    if (!state.turn?.turn) return;
    void client.request({ type: 'stop', conversation: conversation.id, commandId: newId(), turn: state.turn.turn, reply: state.turn.reply }).catch(() => {});
  };

  // This tab's sends, then sends queued by other tabs (from the server's queue).
  const mine = new Set(outgoing.map((o) => o.commandId));
  const visibleQueue: Outgoing[] = [
    ...outgoing.filter((o) => o.state !== 'done'),
    ...state.queue.filter((q) => !mine.has(q.commandId)).map((q) => ({ commandId: q.commandId, kind: 'send' as const, text: q.text, state: q.state as Outgoing['state'] })),
  ];
  return (
    <>
      <ArtifactReaderContext.Provider value={readArtifact}>
        <Transcript
          view={view}
          heights={heights}
          saved={cache.anchors.get(viewKey)}
          onSave={(a) => {
            if (a) cache.anchors.set(viewKey, a);
            else cache.anchors.delete(viewKey);
          }}
        />
      </ArtifactReaderContext.Provider>
      {visibleQueue.length > 0 ? (
        <ol className="queue" aria-label="Queue">
          {visibleQueue.map((o) => (
            <li key={o.commandId} className="queue-item" data-state={o.state} data-kind={o.kind}>
              <span className="queue-text">{o.text}</span>
              <span className="queue-state">{o.state === 'pending' || o.state === 'uncertain' ? 'sending…' : o.state}</span>
            </li>
          ))}
        </ol>
      ) : null}
      {steerDraft !== undefined ? (
        <div className="steer-draft" role="note">
          <span>Not delivered (the turn was stopped): {steerDraft}</span>
          <button
            type="button"
            onClick={() => {
              const t = steerDraft;
              setSteerDraft(undefined);
              void send(t, []);
            }}
          >
            Send
          </button>
        </div>
      ) : null}
      {state.approvals.length > 0 ? (
        <div className="approvals" role="group" aria-label="Approvals">
          {state.approvals.map((a) => (
            <div key={a.invocationId} className="approval" data-invocation={a.invocationId}>
              <span className="approval-tool">{a.tool}</span> <code className="approval-args">{a.args.slice(0, 500)}</code>
              <button type="button" onClick={() => void client.request({ type: 'approve', conversation: conversation.id, commandId: newId(), invocationId: a.invocationId, allow: true }).catch(() => {})}>
                Allow
              </button>
              <button type="button" onClick={() => void client.request({ type: 'approve', conversation: conversation.id, commandId: newId(), invocationId: a.invocationId, allow: false }).catch(() => {})}>
                Deny
              </button>
            </div>
          ))}
        </div>
      ) : null}
      {state.turn ? (
        <button type="button" className="stop-button" onClick={stop}>
          Stop
        </button>
      ) : null}
      <Composer
        draft={draft}
        setDraft={setDraft}
        running={state.turn !== undefined}
        onSend={(t, f) => void send(t, f)}
        onSteer={steer}
        models={models}
        model={chosen ?? current}
        onModel={setChosen}
      />
    </>
  );
}

/**
 * ChatPane shows one conversation (or one place in it): its title, the graph
 * on request, the transcript (with edit and ‹ n/m › on user messages) and the
 * composer. Two panes are independent views with their own windows and
 * anchors. The pane follows the conversation's selected head: an edit or a
 * switch rebuilds its window from the `head` and `replaced` events.
 */
export function ChatPane(props: ChatPaneProps) {
  const { cache, conversation, slot, head, onOpenList, onClose, api, client } = props;
  const [graphOpen, setGraphOpen] = useState(false);
  const viewKey = conversation ? `${conversation.id}|${head ?? ''}|${slot}` : '';
  const [held, setHeld] = useState<{ key: string; view: TranscriptView } | undefined>();
  useEffect(() => {
    if (!viewKey) return;
    setHeld({ key: viewKey, view: cache.acquire(viewKey) });
    return () => {
      cache.release(viewKey);
      setHeld(undefined);
    };
  }, [cache, viewKey]);
  // Only the view acquired for this key (never the previous key's for one render).
  const view = held?.key === viewKey ? held.view : undefined;
  const viewRef = useRef(view);
  viewRef.current = view;
  const id = conversation?.id;
  const [branches, setBranches] = useState<BranchController | undefined>();
  useEffect(() => {
    if (!id) return;
    const c = new BranchController({
      client,
      conversation: id,
      readMeta: async () => {
        if (!api.meta) throw new Error('no metadata');
        const m = await api.meta(id);
        return { head: m.head ?? 'main', branches: m.branches ?? [], alternatives: m.alternatives ?? [] };
      },
      view: () => viewRef.current,
      newId,
    });
    setBranches(c);
    return () => {
      c.dispose();
      setBranches(undefined);
    };
  }, [client, api, id]);
  return (
    <BranchContext.Provider value={branches}>
      <main className="chat-pane" aria-label="Chat" data-slot={slot}>
        <header className="chat-header">
          <button type="button" className="icon-button list-toggle" aria-label="Conversations" onClick={onOpenList}>
            ☰
          </button>
          <h1 className="chat-title">{conversation?.title ?? 'No conversation'}</h1>
          {conversation ? (
            <button type="button" className="link-button" aria-pressed={graphOpen} aria-expanded={graphOpen} onClick={() => setGraphOpen(!graphOpen)}>
              Graph
            </button>
          ) : null}
          {onClose ? (
            <button type="button" className="icon-button" aria-label="Close pane" onClick={onClose}>
              ×
            </button>
          ) : null}
        </header>
        {graphOpen && conversation ? <PaneGraph api={api} id={conversation.id} /> : null}
        <BranchNotice />
        {conversation && view ? (
          <PaneBody key={viewKey} {...props} conversation={conversation} viewKey={viewKey} view={view} />
        ) : (
          <div className="message-column empty-pane" data-testid="message-column" />
        )}
      </main>
    </BranchContext.Provider>
  );
}

/** PaneGraph loads the graph when opened, and again when the selected head changes. */
function PaneGraph({ api, id }: { api: Api; id: string }) {
  const [, s] = useBranches();
  return <GraphPanel load={() => api.graph(id)} headKey={`${id}|${s.meta?.head ?? ''}`} />;
}
