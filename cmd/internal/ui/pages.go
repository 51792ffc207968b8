package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
)

//go:embed assets
var assets embed.FS

// pages are the ui's templates, parsed when the first page is drawn: not
// by every apl command, which all link this package (1 ms of start-up).
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"seconds": formatSeconds,
		"cost":    formatCost,
		"when":    func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"json":    prettyJSON,
		"key":     func(w *interp.Waiting) string { return w.Key() },
		"deref":   func(p *float64) float64 { return *p },
		// word is a status's first word, for its class: "failed (halt)".
		"word": func(s string) string { w, _, _ := strings.Cut(s, " "); return w },
	}).ParseFS(assets, "assets/*.html"))
})

func (s *Server) routes() {
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /run/{id}", s.runPage)
	s.mux.HandleFunc("GET /run/{id}/live", s.live)
	s.mux.HandleFunc("GET /run/{id}/step/{step}", s.stepPage)
	s.mux.HandleFunc("GET /run/{id}/events", s.eventsPage)
	s.mux.HandleFunc("GET /run/{id}/file/{path...}", s.filePage)
	s.mux.HandleFunc("POST /run/{id}/answer", s.answer)
	s.mux.HandleFunc("GET /playbook", s.playbookPage)
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "apl ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// runsPage lists the runs, filtered by status and playbook.
func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Runs.List()
	if err != nil {
		http.Error(w, "apl ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	status, playbook := r.URL.Query().Get("status"), r.URL.Query().Get("playbook")
	var runs []Summary
	var statuses, playbooks []string
	for _, run := range all {
		if !slices.Contains(statuses, run.Status) {
			statuses = append(statuses, run.Status)
		}
		if !slices.Contains(playbooks, run.Playbook) {
			playbooks = append(playbooks, run.Playbook)
		}
		if (status == "" || run.Status == status) && (playbook == "" || run.Playbook == playbook) {
			runs = append(runs, run)
		}
	}
	sort.Strings(statuses)
	sort.Strings(playbooks)
	s.render(w, "runs.html", map[string]any{
		"Runs": runs, "All": len(all), "Status": status, "Playbook": playbook, "Where": s.opts.Where,
		"Statuses": statuses, "Playbooks": playbooks,
	})
}

// open reads the run of the request, or answers 404.
func (s *Server) open(w http.ResponseWriter, r *http.Request) *Run {
	run, err := s.opts.Runs.Open(r.PathValue("id"))
	if errors.Is(err, ErrNoRun) {
		http.Error(w, "apl ui: no run "+strconv.Quote(r.PathValue("id")), http.StatusNotFound)
		return nil
	}
	if err != nil {
		http.Error(w, "apl ui: "+err.Error(), http.StatusInternalServerError)
		return nil
	}
	return run
}

// runPage is one run: its graph, its steps and items, its question.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	// The stamp is read before the run: if the run changes in between, the
	// live stream finds the page older than the run and sends it whole.
	stamp, _ := s.opts.Runs.Stamp(r.PathValue("id"))
	run := s.open(w, r)
	if run == nil {
		return
	}
	v := s.view(run)
	s.drawGraph(run, v)
	s.render(w, "run.html", map[string]any{"Run": run, "View": v, "Stamp": stamp, "CSRF": s.csrf,
		"Docs": s.documents(run), "Answered": r.URL.Query().Get("answered")})
}

// runView is what the live stream sends and the run page starts from.
type runView struct {
	Status  string          `json:"status"`
	Reason  string          `json:"reason,omitempty"`
	Waiting *interp.Waiting `json:"waiting,omitempty"`
	// Nodes maps a graph node's id to its step's state: done, running,
	// failed, skipped or waiting.
	Nodes map[string]string `json:"nodes"`
	// Edges are how often the run took each edge of the graph and
	// reached each end, by id; Title is the graph's title, "run ID:
	// STATUS". The page marks them on the graph it drew once.
	Edges map[string]int `json:"edges"`
	Title string         `json:"title"`
	// Badges are the lines of the steps' nodes the run reached, by id:
	// how often each ran and how ("completed ×2"), as apl graph --path
	// writes them in the nodes. The drawing keeps a line for them.
	Badges map[string]string `json:"badges"`
	Steps  []stepRow         `json:"steps"`
	// Items are the for_each items' rows; in an update of the live
	// stream, only those that changed since the last one unless ItemsFull.
	Items     []itemRow `json:"items"`
	ItemsFull bool      `json:"items_full,omitempty"`
	// SVG is the playbook's graph, drawn once for a page (drawGraph):
	// the run's states and path are the classes the page gives its
	// nodes and edges (Nodes, Edges). Text is the graph as text with the
	// run over it when it could not be drawn (no Graphviz), with
	// GraphError why.
	SVG        template.HTML `json:"svg,omitempty"`
	Text       string        `json:"text,omitempty"`
	GraphError string        `json:"graph_error,omitempty"`
	Tokens     int           `json:"tokens"`
	Cost       string        `json:"cost"`
	Duration   string        `json:"duration"`
}

type stepRow struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Duration string `json:"duration"`
	Tokens   int    `json:"tokens"`
	Cost     string `json:"cost"`
	Error    string `json:"error,omitempty"`
}

type itemRow struct {
	// I is the row's place in the whole table.
	I       int    `json:"i"`
	Step    string `json:"step"`
	Key     string `json:"key"`
	Status  string `json:"status"`
	Current string `json:"current,omitempty"`
	Error   string `json:"error,omitempty"`
	// Path is the item's steps that ran (or were skipped), in the body's
	// order, with their states.
	Path []itemStep `json:"path"`
}

type itemStep struct {
	Step  string `json:"step"`
	State string `json:"state"`
}

// stateOf is a step record's state as the page names it.
func stateOf(status string) string {
	switch status {
	case interp.StepCompleted:
		return "done"
	case interp.StepRunning, interp.StepFailed, interp.StepSkipped:
		return status
	}
	return ""
}

// view works out a run's page: states, tables, the path on the graph.
// It draws nothing: the graph is drawn once for a page (drawGraph), and
// an update of the run changes only the classes of its nodes and edges.
func (s *Server) view(run *Run) *runView {
	st := run.State
	v := &runView{Status: run.Status, Reason: s.redact(run.Reason), Waiting: st.Waiting, Nodes: map[string]string{},
		Tokens: run.Tokens, Cost: costText(run.CostUSD), Duration: formatSeconds(run.DurationS)}
	if v.Status != interp.StatusWaiting {
		v.Waiting = nil
	}
	pb, err := s.loadRun(run)
	var g *draw.Graph
	drawn := draw.RunOf(st)
	if run.Status != st.Meta.Status {
		// Its process is gone (statusKilled), or another engine says.
		drawn.Status = run.Status
	}
	v.Title = "run " + run.ID + ": " + drawn.Status
	if err != nil {
		v.GraphError = err.Error()
	} else {
		g = draw.New(pb)
		g.Overlay(drawn)
		v.Edges, v.Badges = g.Taken(), g.Badges()
	}
	if v.Edges == nil {
		v.Edges = map[string]int{}
	}
	nodeID := func(step string) string {
		if g != nil {
			if id := g.NodeID(step); id != "" {
				return id
			}
		}
		return "node-" + step
	}
	// A sub-run's question (STEP/SUBSTEP) waits in the step that runs
	// the sub-run, which this run's graph and steps show.
	var waitStep string
	if w := v.Waiting; w != nil {
		waitStep, _, _ = strings.Cut(w.Step, "/")
	}
	for _, name := range stepOrder(st) {
		rec := st.Steps[name]
		if rec.Status == interp.StepPending && rec.Attempts == 0 && len(st.Items[name]) == 0 && name != waitStep {
			continue
		}
		state := stateOf(rec.Status)
		if state == "running" && run.Status != interp.StatusRunning {
			state = "" // the run stopped: the step is not running
		}
		if w := v.Waiting; w != nil && (w.Item != "" && st.Items[name][w.Item] != nil || name == waitStep && w.Item == "") {
			state = "waiting" // it, or one of its items, waits for an answer
		}
		v.Nodes[nodeID(name)] = state
		v.Steps = append(v.Steps, stepRow{Name: name, State: state, Attempts: rec.Attempts, Duration: formatSeconds(rec.DurationS),
			Tokens: rec.Tokens, Cost: costText(rec.CostUSD), Error: s.redact(rec.Error)})
	}
	// Steps inside a for_each take the state of their items: running if
	// any item runs them, else failed if any failed, else done.
	inner := map[string][]string{}
	for _, fe := range slicesSorted(st.Items) {
		items := st.Items[fe]
		for _, it := range sortedItems(items) {
			row := itemRow{I: len(v.Items), Step: fe, Key: it.Key, Status: it.Status, Current: it.Current, Error: s.redact(it.Error)}
			waiting := v.Waiting != nil && v.Waiting.Item == it.Key && it.Steps[waitStep] != nil
			if waiting {
				row.Status = "waiting"
			}
			for _, name := range itemStepOrder(pb, it) {
				state := stateOf(it.Steps[name].Status)
				if waiting && name == waitStep {
					state = "waiting"
				}
				if state == "" {
					continue
				}
				row.Path = append(row.Path, itemStep{name, state})
				inner[name] = append(inner[name], state)
			}
			v.Items = append(v.Items, row)
		}
	}
	for name, states := range inner {
		for _, want := range []string{"waiting", "running", "failed", "done", "skipped"} {
			if slices.Contains(states, want) {
				if want == "running" && run.Status != interp.StatusRunning {
					continue
				}
				v.Nodes[nodeID(name)] = want
				break
			}
		}
	}
	if waitStep != "" {
		id := nodeID(waitStep)
		v.Nodes[id] = "waiting"
		// It has not ended: it waits.
		if b, ok := v.Badges[id]; ok {
			v.Badges[id] = strings.Replace(b, "running", "waiting", 1)
		}
	}
	return v
}

// drawGraph draws run's playbook for v's page: the graph as apl graph
// draws it with ids on its nodes and edges, titled as v is, and every
// step and edge drawn as not reached yet. The page marks what the run
// reached with classes (v.Nodes, v.Edges), so the drawing serves the
// page for as long as it is open: the graph does not change as the run
// goes on. Without Graphviz, v gets the graph as text with the run over
// it instead.
func (s *Server) drawGraph(run *Run, v *runView) {
	pb, err := s.loadRun(run)
	if err != nil {
		v.GraphError = err.Error()
		return
	}
	g := draw.New(pb)
	_, status, _ := strings.Cut(v.Title, ": ")
	g.Overlay(&draw.Run{ID: run.ID, Status: status, Path: &interp.Path{}})
	g.RoomForBadges()
	var dot bytes.Buffer
	g.WriteDotIDs(&dot)
	svg, err := s.opts.Render(dot.String(), "svg")
	if err != nil {
		g = draw.New(pb)
		g.Overlay(draw.RunOf(run.State))
		var text strings.Builder
		g.WriteText(&text)
		v.Text, v.GraphError = text.String(), err.Error()
		return
	}
	v.SVG = template.HTML(stripProlog(svg))
}

// load loads a playbook for the graph.
func (s *Server) load(ref string) (*lang.Playbook, error) {
	if s.opts.Load == nil {
		return nil, errors.New("no playbook loader")
	}
	return s.opts.Load(ref)
}

// loadRun loads the playbook run runs, for its graph.
func (s *Server) loadRun(run *Run) (*lang.Playbook, error) {
	if s.opts.LoadRun != nil {
		return s.opts.LoadRun(run)
	}
	return s.load(run.State.Meta.PlaybookRef)
}

// stripProlog drops what precedes <svg: an XML declaration and a DOCTYPE
// have no place inside an HTML page.
func stripProlog(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		return svg[i:]
	}
	return svg
}

// stepOrder is the steps as they ran, then the others with a record.
func stepOrder(st *interp.State) []string {
	var order []string
	for _, ev := range st.Events {
		if ev.Item == "" && st.Steps[ev.Step] != nil && !slices.Contains(order, ev.Step) {
			order = append(order, ev.Step)
		}
	}
	for _, name := range slicesSorted(st.Steps) {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	return order
}

// itemStepOrder is an item's steps in the body's declared order.
func itemStepOrder(pb *lang.Playbook, it *interp.ItemRecord) []string {
	names := slicesSorted(it.Steps)
	if pb != nil {
		sort.SliceStable(names, func(i, j int) bool {
			a, b := pb.Step(names[i]), pb.Step(names[j])
			return a != nil && b != nil && a.Index < b.Index
		})
	}
	return names
}

func sortedItems(items map[string]*interp.ItemRecord) []*interp.ItemRecord {
	out := make([]*interp.ItemRecord, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

func slicesSorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// doc is one of a run's documents to open.
type doc struct{ Name, Path string }

// documents are the files of the run directory worth opening whole:
// state.json, output.json, the output of the apl resume an answer from
// the page started, and the reports its documents wrote there.
func (s *Server) documents(run *Run) []doc {
	var out []doc
	for _, name := range []string{"state.json", "output.json", "trace.json", "resume.log"} {
		if fi, err := os.Lstat(filepath.Join(run.Dir, name)); err == nil && fi.Mode().IsRegular() {
			out = append(out, doc{name, name})
		}
	}
	for _, name := range slicesSorted(run.State.Meta.Documents) {
		f := run.State.Meta.Documents[name]
		if rel, ok := inside(run.Dir, f.Path, run.State.Meta.Workdir); ok {
			out = append(out, doc{"document " + name, rel})
		}
	}
	return out
}

// inside is path relative to dir when it lies in it (path is relative to
// workdir when not absolute).
func inside(dir, path, workdir string) (string, bool) {
	if path == "" {
		return "", false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(workdir, path)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(absDir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// artifactName reads an artifact's file name: STEP-N.KIND, or
// STEP.ITEM-N.KIND inside a for_each (ITEM escaped).
var artifactName = regexp.MustCompile(`^([^.]+)(?:\.(.+))?-(\d+)\.([a-z]+)$`)

// attempt is what one attempt of a step wrote.
type attempt struct {
	N     int
	Files []artifactFile
}

type artifactFile struct {
	Kind, Path, Content string
	Clipped             bool
}

// maxShown is the most of a file shown inline; the whole opens apart.
const maxShown = 256 << 10

// stepPage is one step of a run (of one item, with ?item=): its record,
// each attempt's prompt, answer and output, its checks and events.
func (s *Server) stepPage(w http.ResponseWriter, r *http.Request) {
	run := s.open(w, r)
	if run == nil {
		return
	}
	st := run.State
	name, item := r.PathValue("step"), r.URL.Query().Get("item")
	rec := st.Steps[name]
	if item != "" {
		rec = nil
		for _, items := range st.Items {
			if it := items[item]; it != nil && it.Steps[name] != nil {
				rec = it.Steps[name]
			}
		}
	}
	var items []string
	for _, fe := range slicesSorted(st.Items) {
		for _, it := range sortedItems(st.Items[fe]) {
			if it.Steps[name] != nil {
				items = append(items, it.Key)
			}
		}
	}
	var events []interp.Event
	var checks []string
	for _, ev := range st.Events {
		if ev.Step != name || item != "" && ev.Item != item {
			continue
		}
		ev.Message = s.redact(ev.Message)
		events = append(events, ev)
		if ev.Type == interp.EventCheckFailed {
			checks = append(checks, ev.Message)
		}
	}
	attempts := s.attempts(run.Dir, name, item)
	var output string
	if rec != nil && len(rec.Output) > 0 {
		output = s.redact(prettyJSON(rec.Output))
	}
	s.render(w, "step.html", map[string]any{"Run": run, "Step": name, "Item": item, "Items": items, "Rec": rec,
		"Output": output, "Attempts": attempts, "Checks": checks, "Events": events, "Fragment": r.URL.Query().Has("fragment")})
}

// attempts reads the artifacts of step (of item) in the run directory.
func (s *Server) attempts(dir, step, item string) []*attempt {
	entries, _ := os.ReadDir(filepath.Join(dir, "artifacts"))
	byN := map[int]*attempt{}
	for _, e := range entries {
		m := artifactName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() || m[1] != step || unescapeItem(m[2]) != item && m[2] != item {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		a := byN[n]
		if a == nil {
			a = &attempt{N: n}
			byN[n] = a
		}
		f := artifactFile{Kind: m[4], Path: "artifacts/" + e.Name()}
		if b, err := readInside(dir, f.Path, maxShown); err == nil {
			f.Content, f.Clipped = s.redact(string(b)), len(b) == maxShown
		}
		a.Files = append(a.Files, f)
	}
	var out []*attempt
	for _, n := range slicesSorted2(byN) {
		a := byN[n]
		slices.SortFunc(a.Files, func(x, y artifactFile) int { return kindRank(x.Kind) - kindRank(y.Kind) })
		out = append(out, a)
	}
	return out
}

func slicesSorted2[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func kindRank(k string) int {
	if i := slices.Index([]string{"prompt", "response", "stdout", "stderr"}, k); i >= 0 {
		return i
	}
	return 4
}

// unescapeItem undoes the escapes of an item key in an artifact's name,
// where a byte other than a letter, a digit, '-' or '.' is written _XX.
func unescapeItem(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// eventsPage is the run's whole event log.
func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request) {
	run := s.open(w, r)
	if run == nil {
		return
	}
	events := slices.Clone(run.State.Events)
	for i := range events {
		events[i].Message = s.redact(events[i].Message)
	}
	s.render(w, "events.html", map[string]any{"Run": run, "Events": events})
}

// filePage serves a file of the run directory as text, secret-redacted.
// The path may not leave the directory: no .., no absolute path, no
// symlink on the way (os.Root refuses one that leads out; readInside
// refuses any).
func (s *Server) filePage(w http.ResponseWriter, r *http.Request) {
	run := s.open(w, r)
	if run == nil {
		return
	}
	b, err := readInside(run.Dir, r.PathValue("path"), 64<<20)
	if err != nil {
		http.Error(w, "apl ui: "+err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte(s.redact(string(b))))
}

// errOutside is the answer to a path that would leave the run directory.
var errOutside = errors.New("not a file of the run directory")

// readInside reads at most limit bytes of rel, a slash-separated path
// inside dir. It refuses an absolute path, a .. element, and any symlink
// along the path, and opens through os.Root so that nothing changed
// meanwhile leads out either.
func readInside(dir, rel string, limit int64) ([]byte, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return nil, errOutside
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, errOutside
		}
		fi, err := os.Lstat(filepath.Join(dir, filepath.Join(parts[:i+1]...)))
		if err != nil {
			return nil, errOutside
		}
		if fi.Mode()&os.ModeSymlink != 0 || i < len(parts)-1 && !fi.IsDir() || i == len(parts)-1 && !fi.Mode().IsRegular() {
			return nil, errOutside
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, errOutside
	}
	defer f.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(io.LimitReader(f, limit))
	return b.Bytes(), err
}

// answer answers the run's waiting question, as apl resume --answer does,
// after the checks resume makes: the question is the one waiting, and a
// choice is one of its options.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	run := s.open(w, r)
	if run == nil {
		return
	}
	key, answer := r.PostFormValue("key"), r.PostFormValue("answer")
	wt := run.State.Waiting
	switch {
	case run.Status != interp.StatusWaiting || wt == nil:
		http.Error(w, fmt.Sprintf("apl ui: run %s is not waiting for a decision (it is %s)", run.ID, run.Status), http.StatusConflict)
		return
	case key != wt.Key():
		http.Error(w, fmt.Sprintf("apl ui: run %s waits at %s, not %s", run.ID, wt.Key(), key), http.StatusConflict)
		return
	case !wt.Text && !slices.Contains(wt.Options, answer):
		http.Error(w, fmt.Sprintf("apl ui: step %s takes one of: %s, not %q", wt.Key(), strings.Join(wt.Options, ", "), answer), http.StatusBadRequest)
		return
	case wt.Text && strings.TrimSpace(answer) == "":
		http.Error(w, fmt.Sprintf("apl ui: step %s takes a typed answer", wt.Key()), http.StatusBadRequest)
		return
	case s.opts.Answer == nil:
		http.Error(w, "apl ui: this server answers no questions", http.StatusNotImplemented)
		return
	}
	if err := s.opts.Answer(r.Context(), run.ID, key, answer); err != nil {
		http.Error(w, "apl ui: "+s.redact(err.Error()), http.StatusConflict)
		return
	}
	http.Redirect(w, r, "/run/"+pathEscape(run.ID)+"?answered="+pathEscape(key), http.StatusSeeOther)
}

func pathEscape(s string) string { return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20") }

// redact removes the secrets of the ui's environment from text it shows,
// as runs remove them from what they write.
func (s *Server) redact(t string) string { return s.redactor.String(t) }

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

func costText(c *float64) string {
	if c == nil {
		return ""
	}
	return formatCost(*c)
}

func formatCost(c float64) string {
	if c < 0.01 {
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

func formatSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", s)
	}
	return d.Round(time.Second).String()
}
