package history

import "sync/atomic"

// Counts of the events of observe.go, for tests that tell one path from
// another.
var (
	indexRebuilds, indexCompactions     atomic.Int64
	indexLightResumes, indexFullResumes atomic.Int64
	indexLightExtends                   atomic.Int64
	indexTails                          atomic.Int64
	wholeReads                          atomic.Int64
	spilledRebuilds                     atomic.Int64
)

func init() {
	counts := map[event]*atomic.Int64{
		evRebuild: &indexRebuilds, evCompaction: &indexCompactions,
		evLightResume: &indexLightResumes, evFullResume: &indexFullResumes,
		evLightExtend: &indexLightExtends, evIndexTail: &indexTails, evWholeRead: &wholeReads,
		evSpilled: &spilledRebuilds,
	}
	observe = func(e event) { counts[e].Add(1) }
}
