package interp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/apl-lang/apl/builtins"
	"github.com/rogpeppe/go-internal/txtar"
)

// runDir is a run's directory: state file and backup, trace.jsonl,
// artifacts/ and output.json.
type runDir struct {
	path string
	// abs is path made absolute, as expressions see it (run.dir).
	abs string

	mu    sync.Mutex
	trace *os.File
	// held are spans not yet written (holdSpan); spanBuf is the buffer
	// they are encoded in; spanErr is a failure to write them outside
	// the walk's turn, not yet logged. mu guards them.
	held    []Span
	spanBuf []byte
	spanErr error
	lock    *os.File
	// redact removes secrets from traces and artifacts.
	redact *builtins.Redactor
	// attrs is the playbook's trace attributes, a JSON object whose
	// fields every span gets.
	attrs []byte
	// procs is procs.log, opened on first use. procsEnd holds the "end"
	// lines not yet written, which wait for the next line or close
	// (procEnded); procsMu guards it and the writes.
	procs     *os.File
	procsOnce sync.Once
	procsMu   sync.Mutex
	procsEnd  []byte
	// ended is set once the run ended (not paused or interrupted): close
	// removes the lock file, which only a run that may go on needs.
	ended bool
}

// newRunID makes a sortable, unique run id.
// NewRunID is a new run id for a run started at now: its UTC time and
// three random bytes, e.g. 20261123T150405-3b2413.
func NewRunID(now time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// createRunDir makes runs/<id>/ and its artifacts/ folder, keeps the
// user's git tree clean with a .gitignore in .apl/, and points latest at
// the new run.
// A .gitignore that cannot be written does not stop the run: the returned
// warning says so.
func createRunDir(runsDir, id string) (d *runDir, warning error, err error) {
	dir := filepath.Join(runsDir, id)
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("create run directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return nil, nil, fmt.Errorf("run %s already exists in %s", id, runsDir)
	}
	warning = ignoreGit(runsDir)
	if err := pointLatest(runsDir, id); err != nil {
		return nil, nil, err
	}
	d, err = openRunDir(dir)
	return d, warning, err
}

// ErrRunInUse is returned when another process holds the run: two
// processes running the same run would run its steps twice.
var ErrRunInUse = errors.New("the run is in use by another apl process")

// openRunDir opens a run directory for this process: it takes the run's
// lock (released by the kernel if the process dies) and opens the trace.
func openRunDir(dir string) (*runDir, error) {
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", dir, ErrRunInUse)
		}
		return nil, fmt.Errorf("lock run: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "trace.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open trace: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return &runDir{path: dir, abs: abs, trace: f, lock: lock}, nil
}

// RunHeld reports whether a live process holds the run in dir. A run whose
// state says running and that no process holds was stopped before it could
// record its end: killed with SIGKILL, or its machine went down. apl
// resume continues it.
func RunHeld(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil {
		// A run removes its lock when it ends; without one nothing holds it.
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

func (d *runDir) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.trace == nil {
		return nil
	}
	d.writeHeld()
	err := d.trace.Close()
	d.trace = nil
	if d.procs != nil {
		d.procLine("")
		d.procs.Close()
	}
	if d.ended {
		// Removed while held, so no other process takes it in between.
		os.Remove(d.lock.Name())
	}
	d.lock.Close() // releases the lock
	return err
}

// ignoreGit writes a .gitignore that ignores everything in the directory
// that holds the runs (.apl/ by default), so runs never dirty a git tree.
func ignoreGit(runsDir string) error {
	root := filepath.Dir(runsDir)
	if filepath.Base(runsDir) != "runs" {
		root = runsDir
	}
	return writeIfMissing(filepath.Join(root, ".gitignore"), "# apl run state; not for version control\n*\n")
}

// writeIfMissing writes a file that apl offers once and then leaves to
// the user.
func writeIfMissing(p, content string) error {
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return fmt.Errorf("keep run state out of git: %w", err)
	}
	return nil
}

// ignoreStateFiles writes a .gitignore naming the state files, next to
// them; other files there (a learnings file) stay visible to git.
func ignoreStateFiles(f files) error {
	var b strings.Builder
	b.WriteString("# apl run state; not for version control\n.state-*.tmp\n")
	for _, p := range []string{f.state, f.backup, f.journal, f.journalBackup, f.events, f.state + ".lock"} {
		b.WriteString(filepath.Base(p) + "\n")
	}
	return writeIfMissing(filepath.Join(filepath.Dir(f.state), ".gitignore"), b.String())
}

// pointLatest makes runs/latest a symlink to the run (or, where symlinks
// are not possible, a file holding its id). Runs that start at once in
// one directory (a for_each's sub-runs, two apl processes) each make
// their own temporary link, named by the run, and the last rename wins.
func pointLatest(runsDir, id string) error {
	latest := filepath.Join(runsDir, "latest")
	tmp := latest + ".tmp-" + id
	os.Remove(tmp)
	if err := os.Symlink(id, tmp); err != nil {
		if err := os.WriteFile(tmp, []byte(id+"\n"), 0o644); err != nil {
			return fmt.Errorf("point latest at %s: %w", id, err)
		}
	}
	if err := os.Rename(tmp, latest); err != nil {
		return fmt.Errorf("point latest at %s: %w", id, err)
	}
	return nil
}

// ResolveRun finds a run directory from a run id, a path, or "" / "latest"
// for the newest run.
func ResolveRun(runsDir, ref string) (string, error) {
	if ref == "" {
		ref = "latest"
	}
	if st, err := os.Stat(ref); err == nil && st.IsDir() && strings.ContainsRune(ref, filepath.Separator) {
		return ref, nil
	}
	p := filepath.Join(runsDir, ref)
	if ref == "latest" {
		if target, err := os.Readlink(p); err == nil {
			return filepath.Join(runsDir, target), nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("no runs in %s yet", runsDir)
		}
		return filepath.Join(runsDir, strings.TrimSpace(string(b))), nil
	}
	for _, name := range []string{stateFile, backupFile, statePointer} {
		if _, err := os.Stat(filepath.Join(p, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no run %q in %s", ref, runsDir)
}

// artifact writes one artifact file and returns its path relative to the
// run directory.
func (d *runDir) artifact(name string, data []byte) (string, error) {
	return d.artifactString(name, unsafeString(data))
}

// artifactString is artifact for text, which it writes without copying:
// an agent's answer may be tens of megabytes.
func (d *runDir) artifactString(name, data string) (string, error) {
	rel := filepath.Join("artifacts", name)
	f, err := os.Create(filepath.Join(d.path, rel))
	if err == nil {
		_, err = f.WriteString(d.redact.String(data))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", fmt.Errorf("write artifact %s: %w", name, err)
	}
	return rel, nil
}

// artifactJSONString writes text, redacted, as a JSON string into an
// artifact, encoding it a piece at a time: a large text output is not
// also held in memory as its encoding.
func (d *runDir) artifactJSONString(name, text string) (string, error) {
	rel := filepath.Join("artifacts", name)
	f, err := os.Create(filepath.Join(d.path, rel))
	if err == nil {
		err = builtins.WriteJSONString(f, d.redact.String(text))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", fmt.Errorf("write artifact %s: %w", name, err)
	}
	return rel, nil
}

// artifactPath is where artifact name is written, and its path in the
// run directory: a driver streams a large answer there itself.
func (d *runDir) artifactPath(name string) (abs, rel string) {
	rel = filepath.Join("artifacts", name)
	return filepath.Join(d.path, rel), rel
}

// redactArtifact redacts an artifact something else wrote (a driver's
// streamed answer). text, when not empty, is known to be the whole
// artifact, so it is looked through instead of reading the file; the
// file is rewritten only when it holds a secret.
func (d *runDir) redactArtifact(rel, text string) error {
	if !d.redact.Active() {
		return nil
	}
	p := filepath.Join(d.path, rel)
	if text == "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text = unsafeString(b)
	}
	red := d.redact.String(text)
	if len(red) == len(text) && unsafe.StringData(red) == unsafe.StringData(text) {
		return nil // no secret: String returned text itself
	}
	return os.WriteFile(p, []byte(red), 0o666)
}

// unsafeString views b as a string without copying it; b must not change
// while the string is in use.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Span is one line of trace.jsonl.
type Span struct {
	Timestamp     time.Time `json:"timestamp"`
	RunID         string    `json:"run_id"`
	Step          string    `json:"step"`
	Item          string    `json:"item,omitempty"`
	Action        string    `json:"action"`
	InputSummary  string    `json:"input_summary"`
	OutputSummary string    `json:"output_summary"`
	DurationMS    int64     `json:"duration_ms"`
	Status        string    `json:"status"`
	Attempt       int       `json:"attempt,omitempty"`
	Artifact      string    `json:"artifact,omitempty"`
	// SessionID is the agent session an agent call ran in.
	SessionID string `json:"session_id,omitempty"`
}

// span writes s to the trace, after the spans held back.
func (d *runDir) span(s Span) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held = append(d.held, s)
	return d.writeHeld()
}

// holdSpan keeps s back, to be written with the next span, by
// flushSpans or when the directory closes: a quick command's span is
// written while the next command runs (procStarted), off the path
// between one step and the next. A SIGKILL in between loses it; the
// trace is not the run's state, which the journal keeps.
func (d *runDir) holdSpan(s Span) {
	d.mu.Lock()
	d.held = append(d.held, s)
	d.mu.Unlock()
}

// flushSpans writes the spans held back. A failure outside the walk's
// turn (procStarted) waits in spanErr for the walk to log it.
func (d *runDir) flushSpans() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writeHeld()
}

// writeHeld writes the held spans in one write, with mu held.
func (d *runDir) writeHeld() error {
	if len(d.held) == 0 {
		return nil
	}
	if d.trace == nil {
		d.held = d.held[:0]
		return errors.New("trace closed")
	}
	b := d.spanBuf[:0]
	for _, s := range d.held {
		s.InputSummary = summarize(s.InputSummary)
		s.OutputSummary = summarize(s.OutputSummary)
		from := len(b)
		b = s.appendJSON(b)
		if len(d.attrs) > 2 {
			// The playbook's attributes join apl's own fields, whose names
			// lang keeps them from taking.
			b = append(append(b[:len(b)-1], ','), d.attrs[1:]...)
		}
		if d.redact.Active() {
			b = append(b[:from], d.redact.Bytes(b[from:])...)
		}
		b = append(b, '\n')
	}
	clear(d.held)
	d.held = d.held[:0]
	d.spanBuf = b
	_, err := d.trace.Write(b)
	return err
}

// appendJSON appends the span as one JSON object, byte for byte as
// encoding/json writes it (TestSpanJSON) except that <, > and & are not
// escaped, but without its reflection: a span is written for every
// action a run takes.
func (s *Span) appendJSON(b []byte) []byte {
	str := func(b []byte, key, v string) []byte {
		b = append(append(append(b, ',', '"'), key...), '"', ':')
		return builtins.AppendJSONString(b, v)
	}
	b = append(b, `{"timestamp":"`...)
	b = s.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = str(b, "run_id", s.RunID)
	b = str(b, "step", s.Step)
	if s.Item != "" {
		b = str(b, "item", s.Item)
	}
	b = str(b, "action", s.Action)
	b = str(b, "input_summary", s.InputSummary)
	b = str(b, "output_summary", s.OutputSummary)
	b = strconv.AppendInt(append(b, `,"duration_ms":`...), s.DurationMS, 10)
	b = str(b, "status", s.Status)
	if s.Attempt != 0 {
		b = strconv.AppendInt(append(b, `,"attempt":`...), int64(s.Attempt), 10)
	}
	if s.Artifact != "" {
		b = str(b, "artifact", s.Artifact)
	}
	if s.SessionID != "" {
		b = str(b, "session_id", s.SessionID)
	}
	return append(b, '}')
}

// summarize cuts s to 200 characters on one line, as the orchestrator
// asks of trace summaries.
func summarize(s string) string {
	if plainSummary(s) {
		return s // what a quick command's span mostly holds: no copy
	}
	// Only the head can show: a long answer is cut before it is split,
	// not turned into words and runes whole.
	if len(s) > 4096 {
		s = strings.ToValidUTF8(s[:4096], "")
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 200 {
		return s
	}
	r := []rune(s)
	return string(r[:197]) + "..."
}

// plainSummary says whether s is its own summary: at most 200 bytes of
// ASCII on one line, words parted by single spaces.
func plainSummary(s string) bool {
	if len(s) > 200 {
		return false
	}
	prev := byte(' ') // a leading space is not plain
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < ' ' || c == ' ' && prev == ' ' {
			return false
		}
		prev = c
	}
	return prev != ' '
}

// sourcesFile holds, in the run directory, the text of every file the
// playbook was loaded from when the run began, so that a resume that finds
// the playbook changed can say what changed.
const sourcesFile = "playbook.txtar"

// writeSources records the playbook's sources in the run directory.
func (d *runDir) writeSources(srcs map[string][]byte) error {
	names := slices.Sorted(maps.Keys(srcs))
	ar := &txtar.Archive{Comment: []byte("The files the playbook was loaded from when the run began.\n")}
	for _, n := range names {
		ar.Files = append(ar.Files, txtar.File{Name: n, Data: srcs[n]})
	}
	return os.WriteFile(filepath.Join(d.path, sourcesFile), txtar.Format(ar), 0o644)
}

// RunSources returns the playbook's sources as they were when the run in
// dir began, by file name; an error if the run did not record them (runs
// of older versions of apl).
func RunSources(dir string) (map[string][]byte, error) {
	ar, err := txtar.ParseFile(filepath.Join(dir, sourcesFile))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range ar.Files {
		out[f.Name] = f.Data
	}
	return out, nil
}
