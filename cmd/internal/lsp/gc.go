package lsp

import (
	"runtime/debug"
	"runtime/metrics"
)

// HeapHeadroom is what apl lsp lets the heap grow by between garbage
// collections at least (Options.HeapHeadroom). An edit of
// stdlib:phase-runner allocates about 8 MB to publish and as much again
// to check its test files, over a live heap of 5 MB: Go's default pace
// (collect when the heap doubles) collected two or three times per edit,
// and those collections (the marking, its assists and write barriers in
// the load) were about a third of an edit's CPU. With 64 MB of headroom
// the server collects once every few edits. A heap that holds more than
// 64 MB live (many large playbooks open) is collected at Go's default
// pace, so the bound on memory is what it was: twice the live heap, or
// the live heap and 64 MB, whichever is larger.
const HeapHeadroom = 64 << 20

// minHeap is Go's smallest heap goal at GOGC=100. The runtime scales it
// with GOGC too, so a live heap below it counts as this much: a GOGC made
// from a tiny live heap (before the first load) would let the heap grow
// to gigabytes.
const minHeap = 4 << 20

// gcPercent is the GOGC that lets a heap of live bytes grow by headroom
// before the next collection, and never less than Go's default of 100.
func gcPercent(live, headroom uint64) int {
	return int(max(100, headroom*100/max(live, minHeap)))
}

// paceGC sets the collector's pace for the live heap as the last
// collection found it, when the server was asked to (HeapHeadroom): the
// live heap changes as playbooks are loaded and put away.
func (s *Server) paceGC() {
	if s.opts.HeapHeadroom <= 0 {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	var live uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = sample[0].Value.Uint64()
	}
	debug.SetGCPercent(gcPercent(live, uint64(s.opts.HeapHeadroom)))
}
