package temporal

import (
	"bytes"
	"context"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/activity"
)

// A playbook's documents are written by a worker, in its project
// directory, as a local run writes them (atomically, with the backup,
// moved to the archive when the run completes): the walk projects them
// at its checkpoints and, when one changed, the write is an activity.
// Workflow code writes no document. (It does read large step results
// from the shared blob store, and keeps a temporary run directory for
// artifacts: see doc.go.)

// docWriter sends the run's document writes to workers one at a time, in
// the order the walk made them. A write made while another is under way
// (another coroutine's checkpoint) is queued; the coroutine whose write
// is under way sends the queued ones after it, skipping a write that a
// later one of the same document replaces and one whose content is what
// the document already holds.
type docWriter struct {
	busy    bool
	queue   []docOp
	written map[string][]byte // by path, what the document holds
}

// docOp is a write of File's document (Data), or, when To is set, a move
// of From to its archive To.
type docOp struct {
	File     interp.DocumentFile
	Data     []byte
	From, To string
}

func (e *runEngine) WriteDocument(f interp.DocumentFile, data []byte) error {
	return e.documentOp(docOp{File: f, Data: data})
}

func (e *runEngine) MoveDocument(from, to string) error {
	return e.documentOp(docOp{From: from, To: to})
}

// documentOp queues op and, unless another coroutine is sending, sends
// the queue. It returns the first failure of what it sent.
func (e *runEngine) documentOp(op docOp) error {
	w := &e.docs
	w.queue = append(w.queue, op)
	if w.busy {
		return nil
	}
	w.busy = true
	defer func() { w.busy = false }()
	var first error
	for len(w.queue) > 0 {
		op := w.queue[0]
		w.queue = w.queue[1:]
		if op.To == "" && (w.replaced(op.File.Path) || bytes.Equal(w.written[op.File.Path], op.Data) && w.written[op.File.Path] != nil) {
			continue
		}
		var f failure
		name := "Document"
		if op.To != "" {
			name = "ArchiveDocument"
		}
		err := e.acts.activity(context.Background(), name, op, &f)
		if err == nil {
			err = f.err()
		}
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if w.written == nil {
			w.written = map[string][]byte{}
		}
		if op.To != "" {
			delete(w.written, op.From)
		} else {
			w.written[op.File.Path] = op.Data
		}
	}
	return first
}

// replaced reports whether a write of the document at path is queued.
func (w *docWriter) replaced(path string) bool {
	for _, op := range w.queue {
		if op.To != "" && op.From == path {
			return false // moved after: the write before the move stands
		}
		if op.To == "" && op.File.Path == path {
			return true
		}
	}
	return false
}

// Document writes a playbook document in the worker's project directory.
func (a *activities) Document(ctx context.Context, op docOp) (payload, error) {
	activity.RecordHeartbeat(ctx)
	return a.blobs.wrap(failureOf(interp.WriteDocumentFile(a.workdir, op.File, op.Data, true)))
}

// ArchiveDocument moves a document to its archive in the worker's project
// directory.
func (a *activities) ArchiveDocument(ctx context.Context, op docOp) (payload, error) {
	activity.RecordHeartbeat(ctx)
	return a.blobs.wrap(failureOf(interp.MoveDocumentFile(a.workdir, op.From, op.To, true)))
}
