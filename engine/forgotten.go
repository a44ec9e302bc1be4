package engine

import (
	"fmt"
	"hash/maphash"
)

// forgottenFilter is a Bloom filter of the IDs of the finished commands
// the engine no longer holds (forgetLocked). It has a fixed size, so a long
// session's commands cost no memory past it: 2^20 bits (128 KiB), four
// probes per ID. It answers "never seen" for certain; "maybe" is checked
// against the command log when there is one (recallLocked). At 30,000
// forgotten commands about one new ID in 7,000 is a "maybe"; at 100,000,
// one in 100.
type forgottenFilter struct {
	bits []uint64
	seed maphash.Seed
}

const forgottenBits = 1 << 20

func (f *forgottenFilter) probes(id string) [4]uint32 {
	h1 := maphash.String(f.seed, id)
	h2 := h1>>33 | h1<<31 | 1
	var out [4]uint32
	for i := range out {
		out[i] = uint32((h1 + uint64(i)*h2) % forgottenBits)
	}
	return out
}

func (f *forgottenFilter) add(id string) {
	if f.bits == nil {
		f.bits, f.seed = make([]uint64, forgottenBits/64), maphash.MakeSeed()
	}
	for _, p := range f.probes(id) {
		f.bits[p/64] |= 1 << (p % 64)
	}
}

func (f *forgottenFilter) maybe(id string) bool {
	if f.bits == nil {
		return false
	}
	for _, p := range f.probes(id) {
		if f.bits[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}

// recallLocked answers a command ID the engine does not hold but may have
// forgotten: with a command log, the receipt it recorded last (ok), or
// nothing when the log never saw the ID (the filter's "maybe" was wrong);
// without one, ErrAlreadyDone, since the ID may belong to a finished
// command and running it again would act twice. e.mu is held: the log is
// read only on a "maybe", which is rare for a new ID.
func (e *Engine) recallLocked(commandID string) (c *command, ok bool, err error) {
	if !e.forgotten.maybe(commandID) {
		return nil, false, nil
	}
	if e.cmdlog == nil {
		return nil, false, fmt.Errorf("%w: %q", ErrAlreadyDone, commandID)
	}
	recs, err := e.cmdlog.LoadCommands()
	if err != nil {
		return nil, false, fmt.Errorf("engine: look up command %q in the command log: %w", commandID, err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].ID == commandID {
			return commandOf(recs[i]), true, nil
		}
	}
	return nil, false, nil
}
