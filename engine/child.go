package engine

import (
	"context"
	"errors"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

var _ tools.Spawner = (*Engine)(nil)

// Spawn runs a child agent for the task tool: a region of its own in the
// live state, its own messages starting from prompt, the engine's tools
// without task (a child does not spawn children), and approvals like the
// main agent. Its usage is counted in its region and the session totals; it
// has no way to write the main answer or the main footer: its tool entries,
// notices and failure go to its own feed. It returns the child's final
// answer.
func (e *Engine) Spawn(ctx context.Context, invocationID, label, prompt string) (string, string, error) {
	lease := e.store.Lease()
	cw, err := lease.StartChild(label)
	if err != nil {
		return "", "", err
	}
	stop := e.watchChild(cw.ID(), tools.ChildObserverFrom(ctx))
	defer func() {
		_ = cw.Complete()
		stop()
	}()
	var set *tools.Set
	if e.tools != nil {
		set = e.tools.Without("task")
	}
	msgs := []message.Message{message.Text(message.User, prompt)}
	a := &agent{e: e, reg: &region{e: e, lease: lease, child: cw}, msgs: &msgs, tools: set}
	res := a.run(ctx)
	if a.w != nil {
		_ = a.w.Finish()
	}
	// How the child ended is written in its own feed, like its tool
	// calls: the main document only gets the task call's receipt.
	switch res.out {
	case outDone:
		return res.answer, cw.ID(), nil
	case outFailed:
		_, _ = a.reg.append(failureOf(res.err))
		return "", cw.ID(), res.err
	case outLoop, outLimit:
		_, _ = a.reg.append(transcript.Notice{Text: res.notice, Tone: transcript.ToneWarn})
		return "", cw.ID(), errors.New(res.notice)
	}
	if err := ctx.Err(); err != nil {
		return "", cw.ID(), err
	}
	return "", cw.ID(), transcript.ErrLeaseRetired
}

// watchChild reports the child's feed to obs (if any) as the store
// publishes it, from one goroutine so calls never overlap. The subscription
// coalesces, so a busy child costs at most one call per change the watcher
// keeps up with. The returned stop ends the watcher and makes the last
// call with the feed as it is then, after Complete settled it, so the
// observer's final state is the settled one.
func (e *Engine) watchChild(id string, obs tools.ChildObserver) (stop func()) {
	if obs == nil {
		return func() {}
	}
	sub := e.store.Subscribe()
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-quit:
				return
			case snap, ok := <-sub.C():
				if !ok {
					return
				}
				if ch, ok := snap.Live.Children.Get(id); ok {
					obs(ch.Feed)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
		sub.Close()
		if ch, ok := e.store.Snapshot().Live.Children.Get(id); ok {
			obs(ch.Feed)
		}
	}
}
