// The message catalog: every string the app shows, in English and German. Adding a locale means adding one Catalog value; the type
// makes a missing key a compile error.
import { createContext, useContext } from 'react';
import type { FailureReason } from '../chat/types';

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

export const LocaleContext = createContext<Locale>('en');

/** useCatalog returns the catalog of the locale in context. */
export function useCatalog(): Catalog {
  return catalogs[useContext(LocaleContext)];
}
