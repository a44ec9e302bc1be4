import { describe, expect, it } from 'vitest';
import { initialDelivery, reduceDelivery, uncertainSends, visibleQueue, withModel, type DeliveryAction, type DeliveryState, type Outgoing } from './delivery';

const run = (actions: DeliveryAction[], from: DeliveryState = initialDelivery) => actions.reduce(reduceDelivery, from);
const send = (commandId: string, text = commandId, kind: 'send' | 'steer' = 'send'): Outgoing => ({ commandId, kind, text, state: 'pending' });

describe('the delivery state machine', () => {
  it('a send leaves the draft, is queued, runs and finishes; a receipt never moves back', () => {
    let s = run([{ type: 'draft', text: 'hi' }, { type: 'submit', o: send('k1', 'hi') }]);
    expect(s.draft).toBe('');
    expect(visibleQueue(s, []).map((o) => [o.commandId, o.state])).toEqual([['k1', 'pending']]);
    s = run([{ type: 'receipt', via: 'event', commandId: 'k1', state: 'running' }, { type: 'receipt', via: 'answer', commandId: 'k1', state: 'queued' }], s);
    expect(s.outgoing[0]!.state).toBe('running');
    s = reduceDelivery(s, { type: 'receipt', via: 'event', commandId: 'k1', state: 'done' });
    expect(visibleQueue(s, [])).toEqual([]);
  });

  it('a refusal did nothing: the text is the draft again and a card says why', () => {
    const s = run([{ type: 'submit', o: send('k1', 'hello') }, { type: 'receipt', via: 'answer', commandId: 'k1', state: 'rejected', code: 'locked', reason: 'locked: folio process 7' }]);
    expect(s.outgoing).toEqual([]);
    expect(s.draft).toBe('hello');
    expect(s.refused).toEqual([{ commandId: 'k1', kind: 'send', text: 'hello', refusal: { code: 'locked', reason: 'locked: folio process 7' } }]);
    expect(s.returned).toEqual([]);
    // Send again drops the card (the component sends under a new ID); Edit takes the text back.
    expect(reduceDelivery(s, { type: 'drop', commandId: 'k1' }).refused).toEqual([]);
    const typed = run([{ type: 'draft', text: '' }, { type: 'drop', commandId: 'k1', takeBack: true }], s);
    expect(typed.draft).toBe('hello');
    // Taking back never overwrites something else typed meanwhile.
    expect(run([{ type: 'draft', text: 'new words' }, { type: 'drop', commandId: 'k1', takeBack: true }], s).draft).toBe('new words');
  });

  it('a send the stop cancelled comes back with Send and Discard, from the answer or a receipt event', () => {
    let s = run([{ type: 'submit', o: send('k1') }, { type: 'submit', o: send('k2') }]);
    s = run([{ type: 'receipt', via: 'answer', commandId: 'k1', state: 'rejected', code: 'cancelled' }, { type: 'receipt', via: 'event', commandId: 'k2', state: 'removed' }], s);
    expect(s.returned.map((r) => r.commandId)).toEqual(['k1', 'k2']);
    expect(s.refused).toEqual([]);
    expect(s.draft).toBe('');
    // Given back once, even if the answer and the event both say so.
    s = reduceDelivery(s, { type: 'receipt', via: 'event', commandId: 'k1', state: 'rejected', code: 'cancelled' });
    expect(s.returned).toHaveLength(2);
  });

  it('a frame the server refused (error frame) is a refusal; unknown-model forgets the pick', () => {
    let s = run([{ type: 'choose', name: 'local/x' }, { type: 'models', current: 'demo/folio-demo' }]);
    const o = withModel(s, send('k1'));
    expect(o.model).toBe('local/x');
    s = run([{ type: 'submit', o }, { type: 'refused', commandId: 'k1', refusal: { code: 'unknown-model' } }], s);
    expect(s.chosen).toBeUndefined();
    expect(s.refused[0]!.refusal.code).toBe('unknown-model');
    expect(s.draft).toBe('k1');
  });

  it('the model goes with the one send that switches, never with a steer', () => {
    let s = run([{ type: 'models', current: 'demo/a' }, { type: 'choose', name: 'demo/b' }]);
    expect(withModel(s, send('s', 'x', 'steer')).model).toBeUndefined();
    s = reduceDelivery(s, { type: 'submit', o: withModel(s, send('k1')) });
    expect(s.current).toBe('demo/b');
    expect(withModel(s, send('k2')).model).toBeUndefined();
  });

  it('a lost answer makes delivery uncertain, resent under the same ID; a later state still wins', () => {
    let s = run([{ type: 'submit', o: send('k1') }, { type: 'lost', commandId: 'k1' }]);
    expect(uncertainSends(s).map((o) => o.commandId)).toEqual(['k1']);
    s = reduceDelivery(s, { type: 'receipt', via: 'answer', commandId: 'k1', state: 'queued' });
    expect(uncertainSends(s)).toEqual([]);
    // A final state is never made uncertain again.
    s = run([{ type: 'receipt', via: 'event', commandId: 'k1', state: 'done' }, { type: 'lost', commandId: 'k1' }], s);
    expect(s.outgoing[0]!.state).toBe('done');
  });

  it('other tabs\' queued sends follow this tab\'s own', () => {
    const s = run([{ type: 'submit', o: send('k1') }]);
    const q = visibleQueue(s, [
      { commandId: 'k1', text: 'k1', state: 'queued' },
      { commandId: 'o1', text: 'other', state: 'queued' },
    ]);
    expect(q.map((o) => o.commandId)).toEqual(['k1', 'o1']);
  });
});
