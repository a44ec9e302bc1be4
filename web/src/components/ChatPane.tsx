import { Check, CheckCheck, GitBranch, Menu, X } from 'lucide-react';
import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { BranchController } from '../chat/branches';
import type { ViewCache } from '../chat/cache';
import type { ConversationMeta, Message } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import type { TranscriptView } from '../chat/view';
import type { Api, ModelInfo } from '../protocol/api';
import { ProtocolError, type Client } from '../protocol/client';
import type { CommandState, Receipt } from '../protocol/frames';
import { advances, isFinal, isReturned } from '../protocol/states';
import { ApprovalView, waitingPresentation } from './ApprovalView';
import { ArtifactReaderContext, type ArtifactReader } from './ArtifactOutput';
import { BranchContext, BranchNotice, useBranches } from './BranchControls';
import { useLatest } from '../useLatest';
import { Composer } from './Composer';
import { GraphPanel } from './GraphPanel';
import { Transcript } from './Transcript';
import { TurnActionsContext, type TurnActions } from './TurnActions';

/** A message the user sent, as the pane tracks its delivery. */
export interface Outgoing {
  commandId: string;
  kind: 'send' | 'steer';
  text: string;
  attachments?: string[];
  /** The model this send switches to (a name from the model list). */
  model?: string;
  /** pending: sent, no answer; uncertain: the connection dropped before the answer. */
  state: CommandState;
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
  /** A message to send once the pane shows its (just created) conversation. */
  firstMessage?: { text: string; files: File[] };
  onFirstSent?: () => void;
  /** No conversation yet: the first send creates one (titled from that message). */
  onStart?: (text: string, files: File[]) => void;
}

/** A message given back to the user: the stop cancelled it before it ran. */
interface Returned {
  commandId: string;
  kind: 'send' | 'steer';
  text: string;
}

/** lastFailure is the failure entry of the transcript's last reply, the only one `retry` accepts. */
function lastFailure(rows: readonly Message[]): string | undefined {
  const last = rows[rows.length - 1];
  return last?.role === 'assistant' && last.state === 'failed' ? last.failure?.id : undefined;
}

/** The pane's body for one view: the transcript, queue and composer. */
function PaneBody({ client, api, cache, conversation, viewKey, view, firstMessage, onFirstSent }: ChatPaneProps & { viewKey: string; view: TranscriptView; conversation: ConversationMeta }) {
  const t = useCatalog();
  const state = useSyncExternalStore(view.subscribe, view.getState);
  const [draft, setDraft] = useState('');
  const [outgoing, setOutgoing] = useState<Outgoing[]>([]);
  const [returned, setReturned] = useState<Returned[]>([]);
  const [approvalError, setApprovalError] = useState<string | undefined>();
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

  const giveBack = (o: { commandId: string; kind: 'send' | 'steer'; text: string }) =>
    setReturned((l) => (l.some((r) => r.commandId === o.commandId) ? l : [...l, { commandId: o.commandId, kind: o.kind, text: o.text }]));
  const update = (commandId: string, patch: Partial<Outgoing> & { state: CommandState }) =>
    setOutgoing((list) => list.map((o) => (o.commandId === commandId && advances(o.state, patch.state) ? { ...o, ...patch } : o)));

  const deliver = async (o: Outgoing) => {
    const frame: Record<string, unknown> = { type: o.kind, conversation: conversation.id, commandId: o.commandId, text: o.text };
    if (o.kind === 'send' && o.attachments?.length) frame.attachments = o.attachments;
    if (o.kind === 'send' && o.model) frame.model = o.model;
    try {
      const r = (await client.request(frame)).receipt as { state: CommandState; code?: string };
      if (isReturned(r.state)) {
        setOutgoing((list) => list.filter((x) => x.commandId !== o.commandId));
        // A definitive rejection gives the text back as an ordinary draft; a
        // message the stop cancelled comes back with an explicit Send.
        if (r.code === 'cancelled') giveBack(o);
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

  const deliverRef = useLatest(deliver);
  useEffect(
    () =>
      client.onStatus((s) => {
        if (s !== 'open') return;
        setOutgoing((list) => {
          for (const o of list) if (o.state === 'uncertain') void deliverRef.current(o);
          return list;
        });
      }),
    [client, conversation.id, deliverRef],
  );

  useEffect(
    () =>
      client.onEvent((f) => {
        if (f.type !== 'event' || f.conversation !== conversation.id || f.op !== 'receipt') return;
        const r = f.receipt as Receipt;
        if (isReturned(r.state)) {
          // A queued send the stop cancelled leaves the queue and comes back
          // as a draft with Send and Discard.
          setOutgoing((list) => {
            const o = list.find((x) => x.commandId === r.commandId);
            if (o) giveBack(o);
            return list.filter((x) => x.commandId !== r.commandId);
          });
          return;
        }
        update(r.commandId, { state: r.state, code: r.code });
      }),
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
  // The message that created this conversation is sent once, as soon as the
  // pane shows it.
  const firstSent = useRef(false);
  useEffect(() => {
    if (!firstMessage || firstSent.current) return;
    firstSent.current = true;
    onFirstSent?.();
    void send(firstMessage.text, firstMessage.files);
  });
  const steer = (text: string) => {
    setDraft('');
    const o: Outgoing = { commandId: newId(), kind: 'steer', text, state: 'pending' };
    setOutgoing((l) => [...l, o]);
    void deliver(o);
  };
  const stop = () => {
    if (!state.turn?.turn) return;
    void client.request({ type: 'stop', conversation: conversation.id, commandId: newId(), turn: state.turn.turn, reply: state.turn.reply }).catch(() => {});
  };
  // allow for this conversation sends scope "conversation"; allow once sends
  // no scope, which the server takes as once.
  const approve = (invocationId: string, allow: boolean, scope?: 'conversation') => {
    setApprovalError(undefined);
    const frame: Record<string, unknown> = { type: 'approve', conversation: conversation.id, commandId: newId(), invocationId, allow };
    if (scope) frame.scope = scope;
    void client.request(frame).catch((e: unknown) => setApprovalError(e instanceof Error ? e.message : String(e)));
  };
  const retryable = lastFailure(state.rows);
  const actions = useMemo<TurnActions>(
    () => ({
      retryable,
      retry: (failureId) => {
        void client.request({ type: 'retry', conversation: conversation.id, commandId: newId(), failureId }).catch(() => {});
      },
    }),
    [client, conversation.id, retryable],
  );

  // This tab's sends, then sends queued by other tabs (from the server's queue).
  const mine = new Set(outgoing.map((o) => o.commandId));
  const visibleQueue: Outgoing[] = [
    ...outgoing.filter((o) => !isFinal(o.state)),
    ...state.queue.filter((q) => !mine.has(q.commandId)).map((q) => ({ commandId: q.commandId, kind: 'send' as const, text: q.text, state: q.state })),
  ];
  return (
    <TurnActionsContext.Provider value={actions}>
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
      <div className="pane-dock">
        {visibleQueue.length > 0 ? (
          <ol className="queue" aria-label={t.queue}>
            {visibleQueue.map((o) => (
              <li key={o.commandId} className="queue-item" data-state={o.state} data-kind={o.kind}>
                <span className="queue-text">{o.text}</span>
                <span className="queue-state">{o.state === 'pending' || o.state === 'uncertain' ? t.sending : (t.queueState[o.state as keyof typeof t.queueState] ?? o.state)}</span>
              </li>
            ))}
          </ol>
        ) : null}
        {returned.map((r) => (
          <div key={r.commandId} className={r.kind === 'steer' ? 'draft-card steer-draft' : 'draft-card'} role="group" aria-label={t.cancelledDraft} data-testid="returned-draft">
            <span className="draft-note">{t.cancelledDraft}</span>
            <span className="draft-text">{r.text}</span>
            <span className="draft-actions">
              <button
                type="button"
                className="button button-primary"
                onClick={() => {
                  setReturned((l) => l.filter((x) => x.commandId !== r.commandId));
                  void send(r.text, []);
                }}
              >
                {t.send}
              </button>
              <button type="button" className="button" onClick={() => setReturned((l) => l.filter((x) => x.commandId !== r.commandId))}>
                {t.discard}
              </button>
            </span>
          </div>
        ))}
        {state.approvals.length > 0 ? (
          <div className="approvals" role="group" aria-label={t.approvals}>
            {state.approvals.map((a) => (
              <div key={a.invocationId} className="approval" data-invocation={a.invocationId} data-tool={a.tool}>
                <div className="approval-head">{t.approvalAsks(a.tool)}</div>
                <ApprovalView args={a.args} presentation={waitingPresentation(state.rows, a.invocationId)} />
                <div className="approval-actions">
                  <button type="button" className="button button-primary" data-choice="once" onClick={() => approve(a.invocationId, true)}>
                    <Check aria-hidden="true" size={14} />
                    {t.allowOnce}
                  </button>
                  <button type="button" className="button" data-choice="conversation" onClick={() => approve(a.invocationId, true, 'conversation')}>
                    <CheckCheck aria-hidden="true" size={14} />
                    {t.allowConversation}
                  </button>
                  <button type="button" className="button button-danger" data-choice="deny" onClick={() => approve(a.invocationId, false)}>
                    <X aria-hidden="true" size={14} />
                    {t.deny}
                  </button>
                </div>
              </div>
            ))}
            {approvalError ? (
              <p className="approval-error" role="alert">
                {approvalError}
              </p>
            ) : null}
          </div>
        ) : null}
        <Composer
          draft={draft}
          setDraft={setDraft}
          running={state.turn !== undefined}
          onSend={(text, f) => void send(text, f)}
          onSteer={steer}
          onStop={state.turn ? stop : undefined}
          models={models}
          model={chosen ?? current}
          onModel={setChosen}
        />
      </div>
    </TurnActionsContext.Provider>
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
  const { cache, conversation, slot, head, onOpenList, onClose, api, client, onStart } = props;
  const t = useCatalog();
  const [newDraft, setNewDraft] = useState('');
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
      <main className="chat-pane" aria-label={t.chat} data-slot={slot}>
        <header className="chat-header">
          <button type="button" className="icon-button list-toggle" aria-label={t.conversations} onClick={onOpenList}>
            <Menu aria-hidden="true" size={18} />
          </button>
          <h1 className="chat-title">{conversation?.title ?? t.noConversation}</h1>
          {conversation ? (
            <button type="button" className="icon-button" aria-label={t.graph} title={t.graph} aria-pressed={graphOpen} aria-expanded={graphOpen} onClick={() => setGraphOpen(!graphOpen)}>
              <GitBranch aria-hidden="true" size={16} />
            </button>
          ) : null}
          {onClose ? (
            <button type="button" className="icon-button" aria-label={t.closePane} title={t.closePane} onClick={onClose}>
              <X aria-hidden="true" size={18} />
            </button>
          ) : null}
        </header>
        {graphOpen && conversation ? <PaneGraph api={api} id={conversation.id} /> : null}
        <BranchNotice />
        {conversation && view ? (
          <PaneBody key={viewKey} {...props} conversation={conversation} viewKey={viewKey} view={view} />
        ) : (
          <>
            <div className="message-column empty-pane" data-testid="message-column" />
            {onStart && !conversation ? (
              <div className="pane-dock">
                <Composer
                  draft={newDraft}
                  setDraft={setNewDraft}
                  onSend={(text, files) => {
                    setNewDraft('');
                    onStart(text, files);
                  }}
                />
              </div>
            ) : null}
          </>
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
