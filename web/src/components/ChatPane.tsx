import { Check, CheckCheck, GitBranch, Menu, Search, Share2, X } from 'lucide-react';
import { type ReactNode, useEffect, useMemo, useReducer, useRef, useState, useSyncExternalStore } from 'react';
import { BranchController } from '../chat/branches';
import type { ViewCache } from '../chat/cache';
import { initialDelivery, reduceDelivery, uncertainSends, visibleQueue, withModel, type Outgoing } from '../chat/delivery';
import type { ConversationMeta, Message } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import type { TranscriptView } from '../chat/view';
import { HttpError, type Api, type ModelInfo, type Workspace } from '../protocol/api';
import { ProtocolError, type Client } from '../protocol/client';
import type { Refusal } from '../protocol/errors';
import type { Approve, Dismiss, Retry, Send, Steer, Stop } from '../protocol/frames';
import { MissingConversation, RefusalNotice, RefusedDraft } from './Refusal';
import { Welcome } from './Welcome';
import { ShareDialog } from './ShareDialog';
import { ApprovalView, waitingPresentation } from './ApprovalView';
import { ArtifactReaderContext, type ArtifactReader } from './ArtifactOutput';
import { BranchContext, BranchNotice, useBranches } from './BranchControls';
import { useLatest } from '../useLatest';
import { Composer } from './Composer';
import { GraphPanel } from './GraphPanel';
import { Transcript } from './Transcript';
import { TurnActionsContext, type TurnActions } from './TurnActions';

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
  /** A message to send once the pane shows its (just created) conversation, with the model picked for it. */
  firstMessage?: { text: string; files: File[]; model?: string };
  onFirstSent?: () => void;
  /** No conversation yet: the first send creates one (titled from that message). */
  onStart?: (text: string, files: File[], model?: string) => void;
  /** Leave a conversation the server does not have for the list. */
  onShowList?: () => void;
  /** Shown through a share link: no composer; the server refuses every command anyway. */
  readOnly?: boolean;
  /** Open the find bar (find inside this conversation, web/src/search/FindBar). */
  onFind?: () => void;
  /** The find bar, shown under the header while it is open. */
  find?: ReactNode;
  /** The owner may share the conversation (accounts on, not a share link): the header's Share button. */
  canShare?: boolean;
}

/** lastFailure is the failure entry of the transcript's last reply, the only one `retry` accepts. */
function lastFailure(rows: readonly Message[]): string | undefined {
  const last = rows[rows.length - 1];
  return last?.role === 'assistant' && last.state === 'failed' ? last.failure?.id : undefined;
}

/** refusalOf turns what a request threw into a refusal to show (an error frame's code, else the transport's). */
function refusalOf(e: unknown): Refusal {
  if (e instanceof ProtocolError) return { code: e.code, reason: e.detail };
  if (e instanceof HttpError) return { code: e.code, reason: e.message };
  return { code: 'internal', reason: e instanceof Error ? e.message : String(e) };
}

/** The pane's body for one view: the transcript, queue and composer. */
function PaneBody({ client, api, cache, conversation, viewKey, view, firstMessage, onFirstSent, onShowList, readOnly }: ChatPaneProps & { viewKey: string; view: TranscriptView; conversation: ConversationMeta }) {
  const t = useCatalog();
  const state = useSyncExternalStore(view.subscribe, view.getState);
  const [d, dispatch] = useReducer(reduceDelivery, initialDelivery);
  const dRef = useLatest(d);
  const [models, setModels] = useState<ModelInfo[]>([]);
  const [modelsAsked, setModelsAsked] = useState(0);
  const composerBox = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    let live = true;
    // An Api without a model list (a read-only embedding) shows no picker.
    if (!api.models) return;
    api.models(conversation.id).then(
      (l) => {
        if (!live) return;
        setModels(l.models);
        dispatch({ type: 'models', current: l.current });
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

  const deliver = async (o: Outgoing) => {
    const frame: Send | Steer =
      o.kind === 'send'
        ? { type: 'send', conversation: conversation.id, commandId: o.commandId, text: o.text, ...(o.attachments?.length ? { attachments: o.attachments } : {}), ...(o.model ? { model: o.model } : {}) }
        : { type: 'steer', conversation: conversation.id, commandId: o.commandId, text: o.text };
    try {
      const r = (await client.request(frame)).receipt;
      dispatch({ type: 'receipt', via: 'answer', commandId: o.commandId, state: r.state, code: r.code, reason: r.reason });
    } catch (e) {
      if (e instanceof ProtocolError) {
        // The server refused the frame itself (an unknown model, text over
        // the limit): nothing happened, so the text is the draft again.
        dispatch({ type: 'refused', commandId: o.commandId, refusal: refusalOf(e) });
        if (e.code === 'unknown-model') setModelsAsked((n) => n + 1);
        return;
      }
      // Transport failure: delivery is uncertain. The same command ID is
      // resent on reconnect (idempotent); the text is never sent under a new ID.
      dispatch({ type: 'lost', commandId: o.commandId });
    }
  };

  const deliverRef = useLatest(deliver);
  useEffect(
    () =>
      client.onStatus((s) => {
        if (s !== 'open') return;
        for (const o of uncertainSends(dRef.current)) void deliverRef.current(o);
      }),
    [client, conversation.id, deliverRef, dRef],
  );

  useEffect(
    () =>
      client.onEvent((f) => {
        if (f.type !== 'event' || f.conversation !== conversation.id || f.op !== 'receipt') return;
        const r = f.receipt;
        dispatch({ type: 'receipt', via: 'event', commandId: r.commandId, state: r.state, code: r.code, reason: r.reason });
      }),
    [client, conversation.id],
  );

  const send = async (text: string, files: File[], model?: string) => {
    let o: Outgoing = withModel(dRef.current, { commandId: newId(), kind: 'send', text, state: 'pending' });
    if (model !== undefined && model !== dRef.current.current) o = { ...o, model };
    dispatch({ type: 'submit', o });
    if (files.length) {
      try {
        o = { ...o, attachments: (await Promise.all(files.map((f) => api.upload(conversation.id, f)))).map((a) => a.id) };
        dispatch({ type: 'attached', commandId: o.commandId, attachments: o.attachments! });
      } catch (e) {
        dispatch({ type: 'refused', commandId: o.commandId, refusal: refusalOf(e) });
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
    void send(firstMessage.text, firstMessage.files, firstMessage.model);
  });
  const steer = (text: string) => {
    const o: Outgoing = { commandId: newId(), kind: 'steer', text, state: 'pending' };
    dispatch({ type: 'submit', o });
    void deliver(o);
  };
  // A returned send or steer stays listed in the engine (a terminal that
  // owns the conversation shows it) until this tab says it took it back.
  const dismiss = (draft: string) => {
    dispatch({ type: 'drop', commandId: draft });
    const frame: Dismiss = { type: 'dismiss', conversation: conversation.id, commandId: newId(), draft };
    void client.request(frame).catch(() => {});
  };
  const stop = () => {
    if (!state.turn?.turn) return;
    const frame: Stop = { type: 'stop', conversation: conversation.id, commandId: newId(), turn: state.turn.turn, ...(state.turn.reply ? { reply: state.turn.reply } : {}) };
    void client.request(frame).catch(() => {});
  };
  // allow for this conversation sends scope "conversation"; allow once sends
  // no scope, which the server takes as once.
  const approve = (invocationId: string, allow: boolean, scope?: 'conversation') => {
    dispatch({ type: 'approval-error' });
    const frame: Approve = { type: 'approve', conversation: conversation.id, commandId: newId(), invocationId, allow, ...(scope ? { scope } : {}) };
    void client.request(frame).catch((e: unknown) => dispatch({ type: 'approval-error', refusal: refusalOf(e) }));
  };
  const retryable = lastFailure(state.rows);
  const actions = useMemo<TurnActions>(
    () => ({
      retryable,
      retry: (failureId) => {
        const frame: Retry = { type: 'retry', conversation: conversation.id, commandId: newId(), failureId };
        void client.request(frame).catch(() => {});
      },
    }),
    [client, conversation.id, retryable],
  );

  if (state.missing) return <MissingConversation id={conversation.id} onShowList={onShowList ?? (() => {})} />;

  // This tab's sends, then sends queued by other tabs (from the server's queue).
  const queue = visibleQueue(d, state.queue);
  const onStop = state.turn ? stop : undefined;
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
      <div
        className="pane-dock"
        onKeyDown={(e) => {
          // Esc stops a running turn, as in the terminal (an open menu or
          // editor takes its Esc first and stops it from coming here).
          if (e.key === 'Escape' && onStop && !e.defaultPrevented) {
            e.preventDefault();
            onStop();
          }
        }}
      >
        {queue.length > 0 ? (
          <ol className="queue" aria-label={t.queue}>
            {queue.map((o) => (
              <li key={o.commandId} className="queue-item" data-state={o.state} data-kind={o.kind}>
                <span className="queue-text">{o.text}</span>
                <span className="queue-state">{o.state === 'pending' || o.state === 'uncertain' ? t.sending : (t.queueState[o.state as keyof typeof t.queueState] ?? o.state)}</span>
              </li>
            ))}
          </ol>
        ) : null}
        {d.refused.map((r) => (
          <RefusedDraft
            key={r.commandId}
            text={r.text}
            refusal={r.refusal}
            onSendAgain={() => {
              dispatch({ type: 'drop', commandId: r.commandId });
              if (dRef.current.draft === r.text) dispatch({ type: 'draft', text: '' });
              if (r.kind === 'steer' && state.turn) steer(r.text);
              else void send(r.text, []);
            }}
            onTakeBack={() => {
              dispatch({ type: 'drop', commandId: r.commandId, takeBack: true });
              composerBox.current?.focus();
            }}
          />
        ))}
        {d.returned.map((r) => (
          <div key={r.commandId} className={r.kind === 'steer' ? 'draft-card steer-draft' : 'draft-card'} role="group" aria-label={t.cancelledDraft} data-testid="returned-draft">
            <span className="draft-note">{t.cancelledDraft}</span>
            <span className="draft-text">{r.text}</span>
            <span className="draft-actions">
              <button
                type="button"
                className="button button-primary"
                onClick={() => {
                  dismiss(r.commandId);
                  void send(r.text, []);
                }}
              >
                {t.send}
              </button>
              <button type="button" className="button" onClick={() => dismiss(r.commandId)}>
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
            {d.approvalError ? (
              <div className="approval-error">
                <RefusalNotice refusal={d.approvalError} onDismiss={() => dispatch({ type: 'approval-error' })} />
              </div>
            ) : null}
          </div>
        ) : null}
        {readOnly ? (
          <div className="read-only-note" role="note" data-testid="read-only">
            {t.readOnlyShare}
          </div>
        ) : (
        <Composer
          boxRef={composerBox}
          draft={d.draft}
          setDraft={(text) => dispatch({ type: 'draft', text })}
          running={state.turn !== undefined}
          onSend={(text, f) => void send(text, f)}
          onSteer={steer}
          onStop={onStop}
          models={models}
          model={d.chosen ?? d.current}
          onModel={(name) => dispatch({ type: 'choose', name })}
        />
        )}
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
  const [graphOpen, setGraphOpen] = useState(false);
  // The conversation whose share dialog is open: another conversation closes it.
  const [shareFor, setShareFor] = useState<string | undefined>();
  const shareOpen = conversation !== undefined && shareFor === conversation.id;
  const setShareOpen = (open: boolean) => setShareFor(open ? conversation?.id : undefined);
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
          {/* A conversation not titled yet (its first turn still running) is a new chat, never its raw ID. */}
          <h1 className="chat-title">{conversation ? conversation.title || t.newChat : t.noConversation}</h1>
          {conversation ? (
            <button type="button" className="icon-button" aria-label={t.graph} title={t.graph} aria-pressed={graphOpen} aria-expanded={graphOpen} onClick={() => setGraphOpen(!graphOpen)}>
              <GitBranch aria-hidden="true" size={16} />
            </button>
          ) : null}
          {conversation && props.canShare && !props.readOnly ? (
            <button type="button" className="icon-button" aria-label={t.share} title={t.share} aria-pressed={shareOpen} aria-expanded={shareOpen} data-testid="share-open" onClick={() => setShareOpen(!shareOpen)}>
              <Share2 aria-hidden="true" size={16} />
            </button>
          ) : null}
          {conversation && props.onFind ? (
            <button type="button" className="icon-button" aria-label={t.findOpen} title={t.findOpen} onClick={props.onFind}>
              <Search aria-hidden="true" size={16} />
            </button>
          ) : null}
          {onClose ? (
            <button type="button" className="icon-button" aria-label={t.closePane} title={t.closePane} onClick={onClose}>
              <X aria-hidden="true" size={18} />
            </button>
          ) : null}
        </header>
        {shareOpen && conversation && props.canShare && !props.readOnly ? (
          <div className="share-slot">
            <ShareDialog api={api} conversation={conversation.id} origin={location.origin} onClose={() => setShareOpen(false)} />
          </div>
        ) : null}
        {graphOpen && conversation ? <PaneGraph api={api} id={conversation.id} /> : null}
        <BranchNotice />
        {conversation ? props.find : null}
        {conversation && view ? (
          <PaneBody key={viewKey} {...props} conversation={conversation} viewKey={viewKey} view={view} />
        ) : onStart && !conversation ? (
          <NewChat api={api} onStart={onStart} />
        ) : (
          <div className="message-column empty-pane" data-testid="message-column" />
        )}
      </main>
    </BranchContext.Provider>
  );
}

/**
 * NewChat is the pane before a conversation exists: the first screen
 * (Welcome) and the composer, whose model picker already works: the pick
 * goes with the first send.
 */
function NewChat({ api, onStart }: { api: Api; onStart: (text: string, files: File[], model?: string) => void }) {
  const [draft, setDraft] = useState('');
  const [models, setModels] = useState<ModelInfo[]>([]);
  const [chosen, setChosen] = useState<string | undefined>();
  const [workspace, setWorkspace] = useState<Workspace | undefined>();
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    let live = true;
    api.models?.().then(
      (l) => live && setModels(l.models),
      () => {},
    );
    api.workspace?.().then(
      (w) => live && setWorkspace(w),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [api]);
  const fallback = models.find((m) => m.default) ?? models[0];
  const model = models.find((m) => m.name === chosen) ?? fallback;
  return (
    <>
      <div className="message-column empty-pane" data-testid="message-column">
        <Welcome
          model={model}
          workspace={workspace}
          onSuggest={(s) => {
            setDraft(s);
            box.current?.focus();
          }}
        />
      </div>
      <div className="pane-dock">
        <Composer
          boxRef={box}
          draft={draft}
          setDraft={setDraft}
          models={models}
          model={model?.name}
          onModel={setChosen}
          onSend={(text, files) => {
            setDraft('');
            onStart(text, files, chosen !== undefined && chosen !== fallback?.name ? chosen : undefined);
          }}
        />
      </div>
    </>
  );
}

/** PaneGraph loads the graph when opened, and again when the selected head changes. */
function PaneGraph({ api, id }: { api: Api; id: string }) {
  const [c, s] = useBranches();
  return <GraphPanel load={() => api.graph(id)} headKey={`${id}|${s.meta?.head ?? ''}`} busy={s.switching !== undefined} onSelect={c ? (head) => void c.selectHead(head) : undefined} />;
}
