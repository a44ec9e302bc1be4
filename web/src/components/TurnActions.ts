import { createContext } from 'react';

/** What a reply's buttons can ask of the pane that shows it. */
export interface TurnActions {
  /** Run the failed turn again (the protocol's `retry`, naming the failure entry). */
  retry(failureId: string): void;
  /** The failure entry the server would retry: only the last turn's failure can be. */
  retryable?: string;
}

/** TurnActionsContext is provided by the chat pane; a bubble without it shows no turn actions. */
export const TurnActionsContext = createContext<TurnActions | undefined>(undefined);
