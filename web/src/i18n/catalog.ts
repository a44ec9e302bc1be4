// The message catalog: every string the app shows, in English and German. Adding a locale means adding one Catalog value; the type
// makes a missing key a compile error.
import { createContext, useContext } from 'react';
import type { FailureReason } from '../chat/types';
import type { ErrorCode } from '../protocol/errors';

export interface Catalog {
  /** One concise headline per failure reason. */
  failure: Record<FailureReason, string>;
  /** The headline for a reason this build does not know. */
  failureUnknown: string;
  details: string;
  thinking: string;
  // The app frame and the conversation list.
  conversations: string;
  newChat: string;
  noConversation: string;
  lightTheme: string;
  readOnlyShare: string;
  signOut: string;
  // Share links (the owner's, with accounts).
  share: string;
  shareTitle: string;
  shareHint: string;
  shareCreate: string;
  /** Shown over a link just made: its address is shown this once. */
  shareNew: string;
  shareCopy: string;
  shareCopied: string;
  shareNone: string;
  shareLoading: string;
  shareRevoke: string;
  /** A listed link: when it was made. */
  shareCreatedAt: (when: string) => string;
  shareClose: string;
  /** The banner while the server cannot reach its conversation store. */
  storeUnavailable: string;
  darkTheme: string;
  rowActions: (title: string) => string;
  openBeside: string;
  rename: string;
  delete: string;
  confirmDelete: string;
  title: string;
  save: string;
  cancel: string;
  closePane: string;
  graph: string;
  chat: string;
  // The composer.
  message: string;
  messagePlaceholder: string;
  attachFiles: string;
  remove: (name: string) => string;
  notAttached: (limit: string, count: number, names: string) => string;
  send: string;
  steer: string;
  stop: string;
  model: string;
  modelHint: string;
  defaultModel: string;
  // Turn actions.
  queue: string;
  sending: string;
  /** The label of a command waiting in the queue, by its state (the protocol's CommandState). */
  queueState: Record<'queued' | 'running' | 'rejected', string>;
  cancelledDraft: string;
  discard: string;
  steerNotDelivered: string;
  retry: string;
  retryIn: (duration: string) => string;
  stoppedAfter: (duration: string) => string;
  stopped: string;
  copy: string;
  copied: string;
  copyCode: string;
  steered: string;
  summarized: string;
  receipt: string;
  // Approvals.
  approvals: string;
  approvalAsks: (tool: string) => string;
  allowOnce: string;
  allowConversation: string;
  deny: string;
  // Steps.
  thinkingStep: string;
  thinkingSteps: (n: number) => string;
  functionStep: string;
  functionSteps: (n: number) => string;
  subAgent: (name: string) => string;
  arguments: string;
  result: string;
  error: string;
  // The transcript window.
  earlierMessages: string;
  laterMessages: string;
  jumpToLatest: string;
  jumpToLatestRetry: string;
  // Branches and edits.
  versions: string;
  previousVersion: string;
  nextVersion: string;
  edit: string;
  editMessage: string;
  sendEdit: string;
  sendingEdit: string;
  dismiss: string;
  // The graph.
  graphUnavailable: (why: string) => string;
  graphLoading: string;
  branches: string;
  compactions: string;
  linked: string;
  noneOnBranch: string;
  none: string;
  summarizes: string;
  spawned: string;
  attached: string;
  from: string;
  forkedFrom: string;
  after: string;
  atStart: string;
  selected: string;
  switchTo: (label: string) => string;
  // Tool output.
  fullOutput: (size: string) => string;
  loading: string;
  couldNotLoad: (why: string) => string;
  tryAgain: string;
  loadMore: (loaded: string, total: string) => string;
  exitCode: (code: number) => string;
  earlierSteps: (n: number) => string;
  entry: string;
  invocation: string;
  // MCP tool results.
  mcpImageAlt: (type: string) => string;
  mcpImage: string;
  mcpCouldNotLoad: (why: string) => string;
  mcpInAll: (size: string) => string;
  mcpKeptAsArtifact: string;
  mcpMoreBlocks: (n: number) => string;
  // The first screen of a new chat (what the terminal's first screen says).
  welcomeTitle: string;
  welcomeTagline: string;
  welcomeFolder: string;
  welcomeData: string;
  demoHint: string;
  suggestionsLabel: string;
  suggestions: string[];
  // Refusals: one sentence per error code, what to do where there is something to do.
  refusal: Record<ErrorCode, string>;
  refusalUnknown: (code: string) => string;
  refusedDraft: string;
  sendAgain: string;
  takeBack: string;
  noSuchConversation: string;
  noSuchConversationHint: string;
  showConversations: string;
  tokenTitle: string;
  tokenBody: string;
  tokenWhere: string;
  tokenStale: string;
  // Search over every conversation.
  searchPlaceholder: string;
  searchClear: string;
  searchResults: string;
  searchNothing: (query: string) => string;
  /** What a hit is, by its role (docs/search.md). */
  searchRole: Record<'prompt' | 'answer' | 'reasoning' | 'tool' | 'notice' | 'failure' | 'summary' | 'title', string>;
  // Find inside one conversation.
  findOpen: string;
  findPlaceholder: string;
  findNewer: string;
  findOlder: string;
  findClose: string;
  /** Which hit is shown: k of n, n+ when older hits were left out. */
  findHit: (k: number, n: number, more: boolean) => string;
  /** Hits found, none of them shown yet. */
  findCount: (n: number, more: boolean) => string;
  findNothing: string;
}

export const catalogs = {
  en: {
    failure: {
      rate_limit: 'The provider’s rate limit was reached',
      auth: 'The provider did not accept the credentials',
      authz: 'Not permitted to use this model',
      context: 'The conversation is too long for this model',
      policy: 'The provider declined this request',
      provider: 'The provider reported an error',
      transport: 'Could not reach the provider',
      timeout: 'The provider took too long to answer',
      cancelled: 'The provider cancelled the reply',
    },
    failureUnknown: 'The reply failed',
    details: 'Details',
    thinking: 'thinking…',
    conversations: 'Conversations',
    newChat: 'New chat',
    noConversation: 'New conversation',
    lightTheme: 'Light theme',
    readOnlyShare: 'Shared read-only: this conversation as it is now.',
    signOut: 'Sign out',
    share: 'Share',
    shareTitle: 'Read-only links',
    shareHint: 'Anyone with a link can read this conversation, as it is and as it goes on, until you revoke the link. Nobody can write through it.',
    shareCreate: 'Create link',
    shareNew: 'New link: copy it now, it is shown only this once.',
    shareCopy: 'Copy link',
    shareCopied: 'Copied',
    shareNone: 'No links to this conversation.',
    shareLoading: 'Loading links…',
    shareRevoke: 'Revoke',
    shareCreatedAt: (when) => `Link made ${when}`,
    shareClose: 'Close sharing',
    storeUnavailable: 'The server cannot reach its database. Sending is paused; this page reconnects on its own.',
    darkTheme: 'Dark theme',
    rowActions: (title) => `Actions for ${title}`,
    openBeside: 'Open beside',
    rename: 'Rename',
    delete: 'Delete',
    confirmDelete: 'Delete for good',
    title: 'Title',
    save: 'Save',
    cancel: 'Cancel',
    closePane: 'Close pane',
    graph: 'Graph',
    chat: 'Chat',
    message: 'Message',
    messagePlaceholder: 'Message folio',
    attachFiles: 'Attach files',
    remove: (name) => `Remove ${name}`,
    notAttached: (limit, count, names) => `Not attached (over ${limit} or more than ${count} files): ${names}`,
    send: 'Send',
    steer: 'Steer',
    stop: 'Stop',
    model: 'Model',
    modelHint: 'Model for this and later messages',
    defaultModel: 'default',
    queue: 'Queue',
    sending: 'sending…',
    queueState: { queued: 'queued', running: 'running', rejected: 'not sent' },
    cancelledDraft: 'Not sent: the turn was stopped',
    discard: 'Discard',
    steerNotDelivered: 'Not delivered (the turn was stopped):',
    retry: 'Retry',
    retryIn: (d) => `the provider asked to wait ${d}`,
    stoppedAfter: (d) => `Stopped after ${d}`,
    stopped: 'Stopped',
    copy: 'Copy',
    copied: 'Copied',
    copyCode: 'Copy code',
    steered: 'Steered:',
    summarized: 'Earlier messages were summarized',
    receipt: 'Turn receipt',
    approvals: 'Approvals',
    approvalAsks: (tool) => `${tool} asks to run`,
    allowOnce: 'Allow once',
    allowConversation: 'Allow for this conversation',
    deny: 'Deny',
    thinkingStep: 'Thinking',
    thinkingSteps: (n) => `Thinking ×${n}`,
    functionStep: 'Function',
    functionSteps: (n) => `Functions ×${n}`,
    subAgent: (name) => `Sub-agent: ${name}`,
    arguments: 'Arguments',
    result: 'Result',
    error: 'Error',
    earlierMessages: 'Earlier messages',
    laterMessages: 'Later messages',
    jumpToLatest: 'Jump to latest',
    jumpToLatestRetry: 'Jump to latest (retry)',
    versions: 'Versions of this message',
    previousVersion: 'Previous version',
    nextVersion: 'Next version',
    edit: 'Edit',
    editMessage: 'Edit message',
    sendEdit: 'Send edit',
    sendingEdit: 'Sending…',
    dismiss: 'Dismiss',
    graphUnavailable: (why) => `Graph unavailable: ${why}`,
    graphLoading: 'Loading graph…',
    branches: 'Branches',
    compactions: 'Compactions',
    linked: 'Linked conversations',
    noneOnBranch: 'None on this branch.',
    none: 'None.',
    summarizes: 'summarizes',
    spawned: 'Spawned',
    attached: 'Attached',
    from: 'from',
    forkedFrom: 'forked from',
    after: 'after',
    atStart: 'at the start',
    selected: '(selected)',
    switchTo: (label) => `Switch to ${label}`,
    fullOutput: (size) => `Full output (${size})`,
    loading: 'Loading…',
    couldNotLoad: (why) => `Could not load: ${why}`,
    tryAgain: 'Try again',
    loadMore: (loaded, total) => `Load more (${loaded} of ${total})`,
    exitCode: (code) => `exit ${code}`,
    earlierSteps: (n) => `… ${n} earlier steps`,
    entry: 'entry',
    invocation: 'invocation',
    mcpImageAlt: (type) => `image from the tool (${type})`,
    mcpImage: 'image',
    mcpCouldNotLoad: (why) => ` · could not load: ${why}`,
    mcpInAll: (size) => `… ${size} in all`,
    mcpKeptAsArtifact: ', kept as an artifact',
    mcpMoreBlocks: (n) => `… ${n} more blocks`,
    welcomeTitle: 'folio',
    welcomeTagline: 'a conversation engine in your browser',
    welcomeFolder: 'Folder',
    welcomeData: 'Data',
    demoHint: 'This is the offline demo model: it answers from a script. For a real one, start folio serve with OPENAI_API_KEY and FOLIO_PROVIDER=openai set, or see docs/providers.md.',
    suggestionsLabel: 'Try',
    suggestions: [
      'Use your tools to list this folder and read the README',
      'Show me a table of three sorting algorithms',
      'Write some code that reverses a string in Go',
    ],
    refusal: {
      'bad-request': 'The server could not read this request (a bug in this page: reload it).',
      'unknown-type': 'The server does not know this request (this page is older or newer than the server: reload it).',
      'too-large': 'Too large for the server: shorten the message or send fewer or smaller files.',
      'too-many': 'Too many at once: wait a moment and send again.',
      'protocol-version': 'This page speaks another protocol version than the server: reload the page.',
      'hello-required': 'The connection was not set up yet: send again.',
      unauthorized: 'The server did not accept this page’s token: open the address folio serve printed.',
      'host-not-allowed': 'The server does not answer to this host name: open the address folio serve printed.',
      'origin-not-allowed': 'The server refused a request from another site.',
      'unsupported-media-type': 'The server refused the request’s content type (a bug in this page: reload it).',
      'token-required': 'Uploads need a token: start folio serve without --no-token.',
      'invalid-id': 'That is not a valid conversation or command ID.',
      'not-found': 'No such conversation, message or file: it may have been deleted.',
      locked: 'Another folio process is writing this conversation (a terminal chat or another server): close it there, then send again.',
      'token-unknown': 'The view expired on the server: it is being reloaded.',
      'token-expired': 'The view expired on the server: it is being reloaded.',
      'token-scope': 'The view belongs to another connection: it is being reloaded.',
      'token-stale': 'The conversation changed: the view is being reloaded.',
      'bad-anchor': 'That place in the conversation no longer exists: jump to the latest message.',
      'bad-direction': 'The server refused a page request (a bug in this page: reload it).',
      'bad-budget': 'The server refused a page request (a bug in this page: reload it).',
      'command-conflict': 'A different command was already sent under this ID: send again.',
      'stop-conflict': 'That turn is no longer the running one: nothing was stopped.',
      'not-running': 'Nothing is running, so there is nothing to stop or steer.',
      'engine-unavailable': 'The server cannot run turns right now (it is shutting down or has no model): try again later.',
      cancelled: 'Not sent: the turn was stopped.',
      unsupported: 'The server cannot do that for this conversation.',
      'bad-range': 'The server refused that part of the file: load it again.',
      'unknown-model': 'The server does not offer that model any more: pick another one and send again.',
      'store-unavailable': 'The server cannot reach its database: nothing was saved. Send again once it is back.',
      internal: 'The server failed: send again, and see the server’s log if it keeps happening.',
      'bad-query': 'The search could not be read: check its quotes and filters.',
      'search-timeout': 'The search took too long: add a word or a filter and try again.',
      busy: 'A turn is running: stop it (or wait for it), then try again.',
      'peer-not-allowed': 'Only a folio process of the same user may use this server’s local socket.',
      'sign-in-required': 'Your session has ended: sign in again, then send again.',
      csrf: 'The server could not tell this request came from this page: reload the page and send again.',
      forbidden: 'Only an admin of this server may do that.',
      unavailable: 'The server cannot read its sessions just now: try again in a moment.',
      'read-only': 'This is a shared, read-only view: nothing can be sent through it.',
    },
    refusalUnknown: (code) => `The server refused this (${code}).`,
    refusedDraft: 'Not sent',
    sendAgain: 'Send again',
    takeBack: 'Edit',
    noSuchConversation: 'No such conversation',
    noSuchConversationHint: 'It may have been deleted, or the address is wrong.',
    showConversations: 'Show conversations',
    tokenTitle: 'This page needs its key',
    tokenBody: 'folio serve protects the app with a token. When it starts, it prints the address to open, with the token after #token=, like this:',
    tokenWhere: 'Open that address (copy it from the terminal where folio serve runs). The token stays in this tab only; a new tab or a bookmark needs the printed address again.',
    tokenStale: 'A token from an earlier run of folio serve no longer works: each start prints a new one unless --token sets it.',
    searchPlaceholder: 'Search conversations',
    searchClear: 'Clear the search',
    searchResults: 'Search results',
    searchNothing: (query) => `Nothing found for ${query}`,
    searchRole: { prompt: 'you', answer: 'answer', reasoning: 'reasoning', tool: 'tool', notice: 'notice', failure: 'failure', summary: 'summary', title: 'title' },
    findOpen: 'Find in this conversation',
    findPlaceholder: 'Find in this conversation',
    findNewer: 'Previous hit (newer)',
    findOlder: 'Next hit (older)',
    findClose: 'Close find',
    findHit: (k, n, more) => `${k} of ${n}${more ? '+' : ''}`,
    findCount: (n, more) => `${n}${more ? '+' : ''} ${n === 1 ? 'hit' : 'hits'}`,
    findNothing: 'No matches',
  },
  de: {
    failure: {
      rate_limit: 'Das Ratenlimit des Anbieters ist erreicht',
      auth: 'Der Anbieter hat die Zugangsdaten nicht akzeptiert',
      authz: 'Keine Berechtigung für dieses Modell',
      context: 'Die Unterhaltung ist zu lang für dieses Modell',
      policy: 'Der Anbieter hat die Anfrage abgelehnt',
      provider: 'Der Anbieter hat einen Fehler gemeldet',
      transport: 'Der Anbieter war nicht erreichbar',
      timeout: 'Der Anbieter hat zu lange nicht geantwortet',
      cancelled: 'Der Anbieter hat die Antwort abgebrochen',
    },
    failureUnknown: 'Die Antwort ist fehlgeschlagen',
    details: 'Details',
    thinking: 'denkt nach…',
    conversations: 'Unterhaltungen',
    newChat: 'Neuer Chat',
    noConversation: 'Neue Unterhaltung',
    lightTheme: 'Helles Design',
    readOnlyShare: 'Nur lesend geteilt: dieses Gespräch, wie es jetzt ist.',
    signOut: 'Abmelden',
    share: 'Teilen',
    shareTitle: 'Links zum Lesen',
    shareHint: 'Wer einen Link hat, kann diese Unterhaltung lesen, so wie sie ist und weitergeht, bis du den Link widerrufst. Schreiben kann niemand darüber.',
    shareCreate: 'Link erstellen',
    shareNew: 'Neuer Link: kopiere ihn jetzt, er wird nur dieses eine Mal gezeigt.',
    shareCopy: 'Link kopieren',
    shareCopied: 'Kopiert',
    shareNone: 'Keine Links zu dieser Unterhaltung.',
    shareLoading: 'Links werden geladen…',
    shareRevoke: 'Widerrufen',
    shareCreatedAt: (when) => `Link erstellt ${when}`,
    shareClose: 'Teilen schließen',
    storeUnavailable: 'Der Server erreicht seine Datenbank nicht. Senden ist angehalten; die Seite verbindet sich von selbst wieder.',
    darkTheme: 'Dunkles Design',
    rowActions: (title) => `Aktionen für ${title}`,
    openBeside: 'Daneben öffnen',
    rename: 'Umbenennen',
    delete: 'Löschen',
    confirmDelete: 'Endgültig löschen',
    title: 'Titel',
    save: 'Speichern',
    cancel: 'Abbrechen',
    closePane: 'Bereich schließen',
    graph: 'Verlauf',
    chat: 'Chat',
    message: 'Nachricht',
    messagePlaceholder: 'Nachricht an folio',
    attachFiles: 'Dateien anhängen',
    remove: (name) => `${name} entfernen`,
    notAttached: (limit, count, names) => `Nicht angehängt (über ${limit} oder mehr als ${count} Dateien): ${names}`,
    send: 'Senden',
    steer: 'Lenken',
    stop: 'Stopp',
    model: 'Modell',
    modelHint: 'Modell für diese und spätere Nachrichten',
    defaultModel: 'Standard',
    queue: 'Warteschlange',
    sending: 'wird gesendet…',
    queueState: { queued: 'wartet', running: 'läuft', rejected: 'nicht gesendet' },
    cancelledDraft: 'Nicht gesendet: die Antwort wurde gestoppt',
    discard: 'Verwerfen',
    steerNotDelivered: 'Nicht zugestellt (die Antwort wurde gestoppt):',
    retry: 'Erneut versuchen',
    retryIn: (d) => `der Anbieter bat, ${d} zu warten`,
    stoppedAfter: (d) => `Gestoppt nach ${d}`,
    stopped: 'Gestoppt',
    copy: 'Kopieren',
    copied: 'Kopiert',
    copyCode: 'Code kopieren',
    steered: 'Gelenkt:',
    summarized: 'Frühere Nachrichten wurden zusammengefasst',
    receipt: 'Beleg der Antwort',
    approvals: 'Freigaben',
    approvalAsks: (tool) => `${tool} möchte ausführen`,
    allowOnce: 'Einmal erlauben',
    allowConversation: 'Für diese Unterhaltung erlauben',
    deny: 'Ablehnen',
    thinkingStep: 'Denken',
    thinkingSteps: (n) => `Denken ×${n}`,
    functionStep: 'Funktion',
    functionSteps: (n) => `Funktionen ×${n}`,
    subAgent: (name) => `Unteragent: ${name}`,
    arguments: 'Argumente',
    result: 'Ergebnis',
    error: 'Fehler',
    earlierMessages: 'Frühere Nachrichten',
    laterMessages: 'Spätere Nachrichten',
    jumpToLatest: 'Zur neuesten',
    jumpToLatestRetry: 'Zur neuesten (erneut versuchen)',
    versions: 'Fassungen dieser Nachricht',
    previousVersion: 'Vorige Fassung',
    nextVersion: 'Nächste Fassung',
    edit: 'Bearbeiten',
    editMessage: 'Nachricht bearbeiten',
    sendEdit: 'Änderung senden',
    sendingEdit: 'Wird gesendet…',
    dismiss: 'Schließen',
    graphUnavailable: (why) => `Verlauf nicht verfügbar: ${why}`,
    graphLoading: 'Verlauf wird geladen…',
    branches: 'Zweige',
    compactions: 'Zusammenfassungen',
    linked: 'Verknüpfte Unterhaltungen',
    noneOnBranch: 'Keine auf diesem Zweig.',
    none: 'Keine.',
    summarizes: 'fasst zusammen',
    spawned: 'Gestartet',
    attached: 'Angehängt',
    from: 'aus',
    forkedFrom: 'abgezweigt von',
    after: 'nach',
    atStart: 'am Anfang',
    selected: '(gewählt)',
    switchTo: (label) => `Zu ${label} wechseln`,
    fullOutput: (size) => `Vollständige Ausgabe (${size})`,
    loading: 'Wird geladen…',
    couldNotLoad: (why) => `Konnte nicht geladen werden: ${why}`,
    tryAgain: 'Erneut versuchen',
    loadMore: (loaded, total) => `Mehr laden (${loaded} von ${total})`,
    exitCode: (code) => `Exit-Code ${code}`,
    earlierSteps: (n) => `… ${n} frühere Schritte`,
    entry: 'Eintrag',
    invocation: 'Aufruf',
    mcpImageAlt: (type) => `Bild vom Werkzeug (${type})`,
    mcpImage: 'Bild',
    mcpCouldNotLoad: (why) => ` · konnte nicht geladen werden: ${why}`,
    mcpInAll: (size) => `… ${size} insgesamt`,
    mcpKeptAsArtifact: ', als Artefakt aufbewahrt',
    mcpMoreBlocks: (n) => `… ${n} weitere Blöcke`,
    welcomeTitle: 'folio',
    welcomeTagline: 'eine Gesprächs-Engine in deinem Browser',
    welcomeFolder: 'Ordner',
    welcomeData: 'Daten',
    demoHint: 'Das ist das Offline-Demomodell: es antwortet nach Skript. Für ein echtes starte folio serve mit OPENAI_API_KEY und FOLIO_PROVIDER=openai, oder siehe docs/providers.md.',
    suggestionsLabel: 'Probier',
    suggestions: [
      'Nutze deine tools: liste diesen Ordner auf und lies die README',
      'Zeig mir eine table mit drei Sortierverfahren',
      'Schreib code, der in Go eine Zeichenkette umdreht',
    ],
    refusal: {
      'bad-request': 'Der Server konnte diese Anfrage nicht lesen (ein Fehler dieser Seite: lade sie neu).',
      'unknown-type': 'Der Server kennt diese Anfrage nicht (Seite und Server passen nicht zusammen: lade die Seite neu).',
      'too-large': 'Zu groß für den Server: kürze die Nachricht oder sende weniger oder kleinere Dateien.',
      'too-many': 'Zu viele auf einmal: warte kurz und sende erneut.',
      'protocol-version': 'Diese Seite spricht eine andere Protokollversion als der Server: lade die Seite neu.',
      'hello-required': 'Die Verbindung war noch nicht bereit: sende erneut.',
      unauthorized: 'Der Server hat das Token dieser Seite nicht angenommen: öffne die Adresse, die folio serve ausgegeben hat.',
      'host-not-allowed': 'Der Server antwortet nicht auf diesen Hostnamen: öffne die Adresse, die folio serve ausgegeben hat.',
      'origin-not-allowed': 'Der Server hat eine Anfrage einer anderen Seite abgelehnt.',
      'unsupported-media-type': 'Der Server hat den Inhaltstyp abgelehnt (ein Fehler dieser Seite: lade sie neu).',
      'token-required': 'Hochladen braucht ein Token: starte folio serve ohne --no-token.',
      'invalid-id': 'Das ist keine gültige Unterhaltungs- oder Befehls-ID.',
      'not-found': 'Diese Unterhaltung, Nachricht oder Datei gibt es nicht: vielleicht wurde sie gelöscht.',
      locked: 'Ein anderer folio-Prozess schreibt gerade diese Unterhaltung (ein Terminal-Chat oder ein anderer Server): schließe sie dort und sende erneut.',
      'token-unknown': 'Die Ansicht ist auf dem Server abgelaufen: sie wird neu geladen.',
      'token-expired': 'Die Ansicht ist auf dem Server abgelaufen: sie wird neu geladen.',
      'token-scope': 'Die Ansicht gehört zu einer anderen Verbindung: sie wird neu geladen.',
      'token-stale': 'Die Unterhaltung hat sich geändert: die Ansicht wird neu geladen.',
      'bad-anchor': 'Diese Stelle gibt es nicht mehr: spring zur neuesten Nachricht.',
      'bad-direction': 'Der Server hat eine Seitenanfrage abgelehnt (ein Fehler dieser Seite: lade sie neu).',
      'bad-budget': 'Der Server hat eine Seitenanfrage abgelehnt (ein Fehler dieser Seite: lade sie neu).',
      'command-conflict': 'Unter dieser ID wurde schon ein anderer Befehl gesendet: sende erneut.',
      'stop-conflict': 'Diese Antwort läuft nicht mehr: nichts wurde gestoppt.',
      'not-running': 'Es läuft nichts, also gibt es nichts zu stoppen oder zu lenken.',
      'engine-unavailable': 'Der Server kann gerade keine Antworten erzeugen (er fährt herunter oder hat kein Modell): versuch es später.',
      cancelled: 'Nicht gesendet: die Antwort wurde gestoppt.',
      unsupported: 'Das kann der Server für diese Unterhaltung nicht.',
      'bad-range': 'Der Server hat diesen Teil der Datei abgelehnt: lade ihn erneut.',
      'unknown-model': 'Dieses Modell bietet der Server nicht mehr an: wähle ein anderes und sende erneut.',
      'store-unavailable': 'Der Server erreicht seine Datenbank nicht: nichts wurde gespeichert. Sende erneut, sobald sie wieder da ist.',
      internal: 'Der Server ist gescheitert: sende erneut, und sieh im Log des Servers nach, wenn es wieder passiert.',
      'bad-query': 'Die Suche ist nicht lesbar: prüfe Anführungszeichen und Filter.',
      'search-timeout': 'Die Suche hat zu lange gedauert: füge ein Wort oder einen Filter hinzu und versuch es erneut.',
      busy: 'Eine Antwort läuft: stoppe sie (oder warte), dann versuch es erneut.',
      'peer-not-allowed': 'Nur ein folio-Prozess desselben Benutzers darf den lokalen Socket dieses Servers nutzen.',
      'sign-in-required': 'Deine Sitzung ist abgelaufen: melde dich erneut an und sende noch einmal.',
      csrf: 'Der Server konnte nicht erkennen, dass diese Anfrage von dieser Seite kam: lade die Seite neu und sende erneut.',
      forbidden: 'Das darf nur ein Admin dieses Servers.',
      unavailable: 'Der Server kann seine Sitzungen gerade nicht lesen: versuch es gleich noch einmal.',
      'read-only': 'Dies ist eine geteilte Ansicht nur zum Lesen: darüber kann nichts gesendet werden.',
    },
    refusalUnknown: (code) => `Der Server hat das abgelehnt (${code}).`,
    refusedDraft: 'Nicht gesendet',
    sendAgain: 'Erneut senden',
    takeBack: 'Bearbeiten',
    noSuchConversation: 'Diese Unterhaltung gibt es nicht',
    noSuchConversationHint: 'Vielleicht wurde sie gelöscht, oder die Adresse ist falsch.',
    showConversations: 'Unterhaltungen zeigen',
    tokenTitle: 'Diese Seite braucht ihren Schlüssel',
    tokenBody: 'folio serve schützt die App mit einem Token. Beim Start gibt es die Adresse zum Öffnen aus, mit dem Token nach #token=, etwa so:',
    tokenWhere: 'Öffne diese Adresse (kopiere sie aus dem Terminal, in dem folio serve läuft). Das Token bleibt nur in diesem Tab; ein neuer Tab oder ein Lesezeichen braucht die ausgegebene Adresse erneut.',
    tokenStale: 'Ein Token eines früheren Starts von folio serve gilt nicht mehr: jeder Start gibt ein neues aus, außer --token legt es fest.',
    searchPlaceholder: 'Unterhaltungen durchsuchen',
    searchClear: 'Suche leeren',
    searchResults: 'Suchergebnisse',
    searchNothing: (query) => `Nichts gefunden für ${query}`,
    searchRole: { prompt: 'du', answer: 'Antwort', reasoning: 'Überlegung', tool: 'Werkzeug', notice: 'Hinweis', failure: 'Fehler', summary: 'Zusammenfassung', title: 'Titel' },
    findOpen: 'In dieser Unterhaltung suchen',
    findPlaceholder: 'In dieser Unterhaltung suchen',
    findNewer: 'Vorheriger Treffer (neuer)',
    findOlder: 'Nächster Treffer (älter)',
    findClose: 'Suche schließen',
    findHit: (k, n, more) => `${k} von ${n}${more ? '+' : ''}`,
    findCount: (n, more) => `${n}${more ? '+' : ''} Treffer`,
    findNothing: 'Keine Treffer',
  },
} satisfies Record<string, Catalog>;

export type Locale = keyof typeof catalogs;

/** pickLocale returns the first supported locale among the user's preferences, else English. */
export function pickLocale(preferred: readonly string[]): Locale {
  for (const tag of preferred) {
    const lang = tag.toLowerCase().split('-')[0];
    if (lang && lang in catalogs) return lang as Locale;
  }
  return 'en';
}

/** failureHeadline returns the localized headline for a failure reason. */
export function failureHeadline(reason: string, locale: Locale): string {
  const c: Catalog = catalogs[locale];
  return Object.hasOwn(c.failure, reason) ? c.failure[reason as FailureReason] : c.failureUnknown;
}

/** refusalText is the localized sentence for a refusal code; an unknown code still says something. */
export function refusalText(code: string, locale: Locale): string {
  const c: Catalog = catalogs[locale];
  return Object.hasOwn(c.refusal, code) ? c.refusal[code as ErrorCode] : c.refusalUnknown(code);
}

export const LocaleContext = createContext<Locale>('en');

/** useCatalog returns the catalog of the locale in context. */
export function useCatalog(): Catalog {
  return catalogs[useContext(LocaleContext)];
}
