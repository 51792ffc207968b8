package interp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// A playbook's documents (lang.Document) are projections of the run: at
// every checkpoint each document's content is evaluated against the run's
// records and, when it changed, written to its file. apl never reads them
// back; the run's own state is what resume reads, and resume writes the
// documents again from it. A projection that fails leaves the last good
// file in place and says so once in the event log.

// docs is what the run remembers of its documents between checkpoints.
type docs struct {
	last map[string][]byte // the bytes last written, by document
	err  map[string]string // the failure last reported, by document
	// archived are the documents moved to their archive as the run
	// ended: the snapshot that follows must not write them again.
	archived map[string]bool
	// inForEach counts the for_each steps running. While one runs, a
	// checkpoint projects the documents only once due: nine times the
	// last projection's cost after it, so that projecting a document over
	// many items takes at most about a tenth of the run; one that comes
	// sooner leaves the projection to a timer (flush), so that the
	// documents lag the run by no more than that.
	inForEach int
	due       time.Time
	flush     func() // stops the pending timer; nil when none
	// current asks the checkpoint being made to project the documents
	// now, due or not: an action is about to start.
	current bool
}

// documentLag is how many times a projection's cost the documents may
// wait for their next projection while a for_each runs.
const documentLag = 9

// openDocuments evaluates the paths of the playbook's documents, once,
// when the run starts, and keeps them in the state. A path that leads
// outside the project stops the run before it begins.
func (r *run) openDocuments() error {
	if r.opts.DryRun != nil || len(r.pb.Documents) == 0 {
		return nil
	}
	r.st.Meta.Documents = map[string]DocumentFile{}
	for _, d := range r.pb.Documents {
		p, err := r.documentPath(d.Path)
		if err != nil {
			return fmt.Errorf("document %q: %w", d.Name, err)
		}
		f := DocumentFile{Path: p, Backup: p + ".bak"}
		if d.Backup != nil {
			if f.Backup, err = r.documentPath(d.Backup); err != nil {
				return fmt.Errorf("document %q: backup: %w", d.Name, err)
			}
		}
		r.st.Meta.Documents[d.Name] = f
	}
	// No two files the run writes may be one: a document over another,
	// or over apl's own state.
	taken := map[string]string{}
	if r.pb.StatePath != "" {
		taken[r.inProject(r.pb.StatePath)] = "the state file"
	}
	for _, d := range r.pb.Documents {
		f := r.st.Meta.Documents[d.Name]
		for _, p := range []string{f.Path, f.Backup} {
			if p == "" {
				continue
			}
			abs := r.inProject(p)
			if other, ok := taken[abs]; ok {
				return fmt.Errorf("document %q: %s is also %s", d.Name, p, other)
			}
			taken[abs] = fmt.Sprintf("document %q's file", d.Name)
		}
	}
	return nil
}

// inProject is p, relative to the project directory or absolute, as an
// absolute path.
func (r *run) inProject(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.workdir, p)
}

// documentPath evaluates a document's path (or its backup's, or its
// archive's) and checks that it lies in the project. "" is allowed, for
// a backup that is not kept.
func (r *run) documentPath(e hcl.Expression) (string, error) {
	p, err := evalString(e, r.evalCtx(nil, nil, e))
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", nil
	}
	if _, err := builtins.ResolvePath(r.workdir, p); err != nil {
		return "", fmt.Errorf("%s: %w", e.Range(), err)
	}
	return p, nil
}

// writeDocuments projects and writes every document of the run whose
// content changed since it was last written; while a for_each runs, only
// once due (docs) or before an action starts, else a timer does it when
// due. A run on an engine
// projects at every checkpoint: its clock does not move within a step,
// and its walk may not depend on timers.
func (r *run) writeDocuments() {
	if r.opts.DryRun != nil || len(r.pb.Documents) == 0 {
		return
	}
	start := r.now()
	if r.docs.inForEach > 0 && !r.docs.current && r.opts.Engine == nil && start.Before(r.docs.due) {
		if r.docs.flush == nil {
			r.docs.flush = r.host.after(r.docs.due.Sub(start), func() {
				r.docs.flush = nil
				r.docs.due = time.Time{}
				r.writeDocuments()
			})
		}
		return
	}
	if r.docs.flush != nil {
		r.docs.flush()
		r.docs.flush = nil
	}
	defer func() { r.docs.due = r.now().Add(documentLag * r.now().Sub(start)) }()
	for _, d := range r.pb.Documents {
		f, ok := r.st.Meta.Documents[d.Name]
		if !ok || r.docs.archived[d.Name] {
			continue // added to the playbook after the run began, or archived
		}
		data, err := r.projectDocument(d)
		if err == nil && bytes.Equal(data, r.docs.last[d.Name]) {
			continue
		}
		if err == nil {
			err = r.host.writeDocument(r.workdir, f, data)
		}
		if err != nil {
			r.documentFailed(d, err)
			continue
		}
		if r.docs.last == nil {
			r.docs.last = map[string][]byte{}
		}
		r.docs.last[d.Name] = data
		delete(r.docs.err, d.Name)
	}
}

// projectDocument evaluates a document's content and encodes it as
// indented JSON, without secrets.
func (r *run) projectDocument(d *lang.Document) ([]byte, error) {
	view := func(_ *frame, refs stepRefs) cty.Value { return r.documentSteps(refs) }
	v, diags := d.Content.Value(r.evalCtxIn(view, nil, nil, d.Content))
	if diags.HasErrors() {
		return nil, diagsError(diags)
	}
	b, err := builtins.CtyToJSON(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Content.Range(), err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return r.redact.Bytes(out.Bytes()), nil
}

// documentSteps is steps as a document, and the locals it reads, see
// it: as everywhere, except that a for_each step still running shows the
// items it has so far (their keys, statuses, errors and outputs) where
// other expressions see no output yet, so that a document can show a
// task table as it fills. So does one the run paused in (pending again,
// its items kept): a run waiting for a person's answer shows the table
// the person decides on.
func (r *run) documentSteps(refs stepRefs) cty.Value {
	m := map[string]cty.Value{}
	r.visitSteps(nil, refs, func(name string, rec *StepRecord, out cty.Value) {
		unfinished := rec.Status == StepRunning || rec.Status == StepPending
		if s := r.pb.Step(name); s != nil && s.ForEach != nil && unfinished && len(r.st.Items[name]) > 0 {
			items := map[string]*item{}
			for k, ir := range r.st.Items[name] {
				items[k] = &item{rec: ir}
			}
			// halted: items still pending are waiting, not deadlocked.
			out, _ = r.forEachOutput(s, items, true)
		}
		m[name] = stepValue(rec, out, r.rawValue(rec))
	})
	return cty.ObjectVal(m)
}

// setAttr returns the object v with attribute name set to x.
func setAttr(v cty.Value, name string, x cty.Value) cty.Value {
	m := v.AsValueMap()
	m[name] = x
	return cty.ObjectVal(m)
}

// documentFailed reports a document that could not be written, once for
// each different failure in a row.
func (r *run) documentFailed(d *lang.Document, err error) {
	msg := fmt.Sprintf("document %q not written (the last one written stays): %v", d.Name, err)
	if r.docs.err[d.Name] == msg {
		return
	}
	if r.docs.err == nil {
		r.docs.err = map[string]string{}
	}
	r.docs.err[d.Name] = msg
	r.event(Event{Type: EventDocumentFailed, Message: msg,
		Details: map[string]any{"document": d.Name, "range": d.DeclRange.String()}})
}

// archiveDocuments moves the documents that have an archive to it, once
// the run has ended well (a failed run leaves its documents in place for
// inspection and resume). It reports whether it added events.
func (r *run) archiveDocuments() bool {
	if r.opts.DryRun != nil {
		return false
	}
	switch r.st.Meta.Status {
	case StatusFailed, StatusInterrupted, StatusWaiting, StatusRunning:
		return false
	}
	events := len(r.st.Events)
	for _, d := range r.pb.Documents {
		f, ok := r.st.Meta.Documents[d.Name]
		if !ok || d.Archive == nil {
			continue
		}
		to, err := r.documentPath(d.Archive)
		if err == nil && to == "" {
			err = errors.New("the archive path is empty")
		}
		if err == nil {
			err = r.host.moveDocument(r.workdir, f.Path, to)
		}
		if err != nil {
			r.documentFailed(d, fmt.Errorf("archive: %w", err))
			continue
		}
		if r.docs.archived == nil {
			r.docs.archived = map[string]bool{}
		}
		r.docs.archived[d.Name] = true
		r.event(Event{Type: EventLog, Message: fmt.Sprintf("document %q archived to %s", d.Name, to)})
	}
	return len(r.st.Events) > events
}

// WriteDocumentFile writes a playbook document's data to f.Path under
// root (the project) as a run does, for an Engine's WriteDocument; sync fsyncs it.
func WriteDocumentFile(root string, f DocumentFile, data []byte, sync bool) error {
	return writeDocumentFile(root, f, data, sync)
}

// MoveDocumentFile moves a document to its archive, both under root, as
// a run does, for an Engine's MoveDocument.
func MoveDocumentFile(root, from, to string, sync bool) error {
	return moveDocumentFile(root, from, to, sync)
}

// writeDocumentFile writes data to f.Path under root atomically: a
// temporary file beside it, synced when sync is set, the current file
// copied to the backup (atomically too), then the temporary file renamed
// into place, so that readers see the old document or the new one,
// never part of one, and never no document.
func writeDocumentFile(root string, f DocumentFile, data []byte, sync bool) error {
	p, err := confinedFile(root, f.Path)
	if err != nil {
		return err
	}
	tmp, err := builtins.WriteTemp(filepath.Dir(p), filepath.Base(p), data, 0o644, sync)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if f.Backup != "" {
		if err := backupDocument(root, p, f.Backup, sync); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	if sync {
		builtins.SyncDir(filepath.Dir(p))
	}
	return nil
}

// backupDocument makes the backup path (under root) the current version
// of the document at p, before p is replaced: a hard link to it, so that
// nothing is read or written again, or a copy where links cannot be made
// (another file system). The backup is replaced atomically too. A missing
// document has no backup to make.
func backupDocument(root, p, backup string, sync bool) error {
	b, err := confinedFile(root, backup)
	if err != nil {
		return err
	}
	btmp := filepath.Join(filepath.Dir(b), "."+filepath.Base(b)+"-"+strconv.Itoa(os.Getpid())+".link")
	os.Remove(btmp)
	if err := os.Link(p, btmp); err != nil {
		old, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if btmp, err = builtins.WriteTemp(filepath.Dir(b), filepath.Base(b), old, 0o644, sync); err != nil {
			return err
		}
	}
	if err := os.Rename(btmp, b); err != nil {
		os.Remove(btmp)
		return err
	}
	return nil
}

// moveDocumentFile moves a document to its archive, both under root.
func moveDocumentFile(root, from, to string, sync bool) error {
	src, err := confinedFile(root, from)
	if err != nil {
		return err
	}
	dst, err := confinedFile(root, to)
	if err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	if sync {
		builtins.SyncDir(filepath.Dir(dst))
		builtins.SyncDir(filepath.Dir(src))
	}
	return nil
}

// confinedFile resolves a document's path in the project and makes its
// directory.
func confinedFile(root, p string) (string, error) {
	real, err := builtins.ResolvePath(root, p)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return "", err
	}
	return real, nil
}

// traceAttributes evaluates the playbook's trace attributes, once, when
// the run starts, into the state (resume uses them again). An attribute
// that fails to evaluate is null, and the event log says why.
func (r *run) traceAttributes(warnings *[]error) {
	t := r.pb.Trace
	if t == nil || len(t.Attributes) == 0 {
		return
	}
	m := map[string]json.RawMessage{}
	for _, a := range t.Attributes {
		v, diags := a.Expr.Value(r.evalCtx(nil, nil, a.Expr))
		b, err := []byte("null"), error(nil)
		if diags.HasErrors() {
			err = diagsError(diags)
		} else if b, err = builtins.CtyToJSON(v); err != nil {
			b = []byte("null")
		}
		if err != nil {
			*warnings = append(*warnings, fmt.Errorf("trace attribute %q is null: %w", a.Name, err))
		}
		m[a.Name] = b
	}
	r.st.Meta.TraceAttributes, _ = json.Marshal(m)
}
