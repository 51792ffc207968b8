package temporal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apl-lang/apl/builtins/agent"

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
//
// A write of a document the run wrote before is a diff, so that the
// history holds what changed and not the whole document at every
// change: Base is the SHA-256 of what the document holds, and Data
// replaces its bytes between the first Keep[0] and the last Keep[1]. A
// worker whose document holds something else (changed by hand meanwhile)
// says so (staleDocument), and the whole document is sent.
type docOp struct {
	File     interp.DocumentFile
	Data     []byte
	From, To string
	Base     string `json:",omitempty"`
	Keep     [2]int `json:",omitempty"`
}

// staleDocument is the failure kind of a diff whose base the document no
// longer holds.
const staleDocument = "document changed"

// diffMin is the size from which a document's write is a diff.
const diffMin = 512

// diff is op as a change of old, when that is smaller.
func diff(op docOp, old []byte) docOp {
	if len(op.Data) < diffMin || old == nil {
		return op
	}
	pre := 0
	for pre < len(old) && pre < len(op.Data) && old[pre] == op.Data[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(op.Data)-pre && old[len(old)-1-suf] == op.Data[len(op.Data)-1-suf] {
		suf++
	}
	sum := sha256.Sum256(old)
	op.Base, op.Keep = hex.EncodeToString(sum[:]), [2]int{pre, suf}
	op.Data = op.Data[pre : len(op.Data)-suf]
	return op
}

// patched is the document op writes: Data itself, or, for a diff, the
// document at root changed by it.
func patched(root string, op docOp) ([]byte, error) {
	if op.Base == "" {
		return op.Data, nil
	}
	p := op.File.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	old, err := os.ReadFile(p)
	sum := sha256.Sum256(old)
	if err != nil || hex.EncodeToString(sum[:]) != op.Base || op.Keep[0]+op.Keep[1] > len(old) {
		return nil, &agent.KindError{Kind: staleDocument, Err: fmt.Errorf("%s does not hold what the run last wrote", op.File.Path)}
	}
	return slices.Concat(old[:op.Keep[0]], op.Data, old[len(old)-op.Keep[1]:]), nil
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
		send := op
		if op.To == "" {
			send = diff(op, w.written[op.File.Path])
		}
		err := e.acts.activity(context.Background(), name, send, &f)
		if err == nil && f.Kind == staleDocument && send.Base != "" {
			err = e.acts.activity(context.Background(), name, op, &f)
		}
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
	data, err := patched(a.workdir, op)
	if err == nil {
		err = interp.WriteDocumentFile(a.workdir, op.File, data, true)
	}
	return a.blobs.wrap(failureOf(err))
}

// ArchiveDocument moves a document to its archive in the worker's project
// directory.
func (a *activities) ArchiveDocument(ctx context.Context, op docOp) (payload, error) {
	activity.RecordHeartbeat(ctx)
	return a.blobs.wrap(failureOf(interp.MoveDocumentFile(a.workdir, op.From, op.To, true)))
}
