package lang

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel calls fn(i) for every i in [0, n), on at most workers
// goroutines and no more than GOMAXPROCS, each taking the next i as it
// finishes one; with fewer than two it calls them in order on the
// caller's goroutine. A panic in fn is raised again on the caller's
// goroutine once every worker has stopped.
func parallel(n, workers int, fn func(i int)) {
	workers = min(workers, n, runtime.GOMAXPROCS(0))
	if workers < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var panicked atomic.Pointer[any]
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					panicked.CompareAndSwap(nil, &p)
				}
			}()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
}
