// Command states are the protocol's one vocabulary (CommandState, generated
// from docs/schema/protocol.schema.json): the engine, the terminal and this
// app name a command's state the same way, with no translation between them.
import type { CommandState } from './frames';

const finalStates: ReadonlySet<CommandState> = new Set<CommandState>(['applied', 'done', 'failed', 'stopped', 'rejected', 'removed']);

/** isFinal: the command can change no more. */
export const isFinal = (s: CommandState): boolean => finalStates.has(s);

/** returned: the engine gave the command back unused; its text is the person's draft again. */
export const isReturned = (s: CommandState): boolean => s === 'rejected' || s === 'removed';

/**
 * advances reports whether a receipt in state next may replace one in state
 * prev: receipts never move back (a command answer can arrive after a later
 * event about the same command).
 */
export function advances(prev: CommandState, next: CommandState): boolean {
  const rank = (s: CommandState) => (isFinal(s) ? 3 : s === 'running' ? 2 : s === 'queued' ? 1 : 0);
  return rank(next) >= rank(prev);
}
