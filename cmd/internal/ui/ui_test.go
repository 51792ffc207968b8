package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// askPlaybook runs a step, asks, then runs another: a run of it waits at
// escalate.
const askPlaybook = `
playbook "esc" {}
step "review" {
  shell { command = ["echo", "high"] }
}
step "escalate" {
  ask {
    question = "What now?"
    options  = ["retry", "skip", "abort"]
  }
}
step "after" {
  shell { command = ["echo", "done"] }
}
output { choice = steps.escalate.output }
`

// project is a project directory with one run of askPlaybook, r1,
// waiting at escalate.
type project struct {
	dir, runs string
	pb        *lang.Playbook
	answered  atomic.Int32
}

func newProject(t testing.TB) *project {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "esc.hcl"), []byte(askPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	pb, diags := (&lang.Loader{}).Load(filepath.Join(dir, "esc.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := &project{dir: dir, runs: interp.RunsDir(dir), pb: pb}
	res, err := interp.Start(context.Background(), pb, "esc.hcl", interp.Options{Workdir: dir, RunID: "r1", NoSync: true})
	if err != nil && res == nil {
		t.Fatal(err)
	}
	if st, _, err := interp.ReadRun(filepath.Join(p.runs, "r1")); err != nil || st.Meta.Status != interp.StatusWaiting {
		t.Fatalf("the run does not wait: %v %+v", err, st)
	}
	return p
}

// server is the ui over the project. Its answers resume the run as apl
// resume --answer does: interp.Resume with the answer.
func (p *project) server() *Server {
	return New(Options{
		Runs: Local{Dir: p.runs},
		Load: func(string) (*lang.Playbook, error) { return p.pb, nil },
		Answer: func(ctx context.Context, id, key, answer string) error {
			p.answered.Add(1)
			_, err := interp.Resume(ctx, p.pb, filepath.Join(p.runs, id), interp.Options{Workdir: p.dir, NoSync: true, Answers: map[string]string{key: answer}})
			return err
		},
		// The tests do not need Graphviz: the graph is its DOT.
		Render: func(dot, format string) ([]byte, error) {
			return []byte(`<svg xmlns="http://www.w3.org/2000/svg"><text>` + html.EscapeString(dot) + `</text></svg>`), nil
		},
		Poll: 20 * time.Millisecond,
	})
}

// get sends a request as the page would: loopback Host, the token's
// cookie.
func get(s *Server, target string, mod ...func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "http://127.0.0.1:8080"+target, nil)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: s.Token()})
	for _, m := range mod {
		m(r)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func post(s *Server, target string, form url.Values, mod ...func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "http://127.0.0.1:8080"+target, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://127.0.0.1:8080")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: s.Token()})
	for _, m := range mod {
		m(r)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func noCookie(r *http.Request) { r.Header.Del("Cookie") }

func status(t *testing.T, p *project) string {
	t.Helper()
	st, _, err := interp.ReadRun(filepath.Join(p.runs, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	return st.Meta.Status
}

// TestTokenRequired: without the token no page answers, the event stream
// included; the token in the URL becomes a cookie and leaves the URL.
func TestTokenRequired(t *testing.T) {
	p := newProject(t)
	s := p.server()
	// A stream let through would not end: its request is cancelled
	// already, so that it ends after its first update.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ended := func(r *http.Request) { *r = *r.WithContext(ctx) }
	for _, target := range []string{"/", "/run/r1", "/run/r1/live", "/run/r1/step/review", "/run/r1/file/state.json", "/static/app.js", "/playbook"} {
		if w := get(s, target, noCookie, ended); w.Code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", target, w.Code)
		}
		if w := get(s, target, ended, func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: cookieName, Value: "guess"})
		}); w.Code != http.StatusForbidden {
			t.Errorf("GET %s with a wrong token: %d, want 403", target, w.Code)
		}
	}
	if w := get(s, "/?token=guess", noCookie); w.Code != http.StatusForbidden {
		t.Errorf("a wrong token in the URL: %d, want 403", w.Code)
	}
	w := get(s, "/run/r1?token="+s.Token(), noCookie)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/run/r1" {
		t.Fatalf("the token in the URL: %d to %q, want 303 to /run/r1", w.Code, w.Header().Get("Location"))
	}
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Value != s.Token() || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie: %+v", c)
	}
	if w := get(s, "/run/r1"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "What now?") {
		t.Errorf("with the cookie: %d %s", w.Code, w.Body.String())
	}
}

// TestHostChecked: a page of another site that points its own DNS name
// at 127.0.0.1 (DNS rebinding) sends its name as Host, and is refused,
// even with the cookie.
func TestHostChecked(t *testing.T) {
	s := newProject(t).server()
	for _, host := range []string{"evil.example", "evil.example:8080", "127.0.0.1.evil.example", ""} {
		w := get(s, "/", func(r *http.Request) { r.Host = host })
		if w.Code != http.StatusForbidden {
			t.Errorf("Host %q: %d, want 403", host, w.Code)
		}
	}
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080"} {
		if w := get(s, "/", func(r *http.Request) { r.Host = host }); w.Code != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", host, w.Code)
		}
	}
}

// TestOriginChecked: a request another origin's page sends (a fetch, a
// form) is refused.
func TestOriginChecked(t *testing.T) {
	s := newProject(t).server()
	for _, o := range []string{"http://evil.example", "http://127.0.0.1:9999", "https://127.0.0.1:8080", "null"} {
		if w := get(s, "/run/r1", func(r *http.Request) { r.Header.Set("Origin", o) }); w.Code != http.StatusForbidden {
			t.Errorf("Origin %s: %d, want 403", o, w.Code)
		}
	}
	if w := get(s, "/run/r1", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:8080") }); w.Code != http.StatusOK {
		t.Errorf("its own origin: %d, want 200", w.Code)
	}
}

// TestAnswerNeedsCSRFToken: a POST that answers must carry the page's
// CSRF token; with the cookie alone (what a cross-site form would send)
// the run is not touched.
func TestAnswerNeedsCSRFToken(t *testing.T) {
	p := newProject(t)
	s := p.server()
	form := url.Values{"key": {"escalate"}, "answer": {"skip"}}
	noOrigin := func(r *http.Request) { r.Header.Del("Origin") }
	for _, f := range []url.Values{form, {"key": {"escalate"}, "answer": {"skip"}, "csrf": {"guess"}}, {"key": {"escalate"}, "answer": {"skip"}, "csrf": {s.Token()}}} {
		if w := post(s, "/run/r1/answer", f, noOrigin); w.Code != http.StatusForbidden {
			t.Errorf("POST %v: %d, want 403", f, w.Code)
		}
	}
	if p.answered.Load() != 0 || status(t, p) != interp.StatusWaiting {
		t.Fatalf("a POST without the CSRF token answered: %d answers, run %s", p.answered.Load(), status(t, p))
	}
}

// TestFilesStayInTheRunDirectory: no path leads out of the run
// directory, by .., by an absolute path, or by a symlink; nor does a run
// id name another directory.
func TestFilesStayInTheRunDirectory(t *testing.T) {
	p := newProject(t)
	s := p.server()
	outside := filepath.Join(p.dir, "secret.txt")
	if err := os.WriteFile(outside, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(p.runs, "r1")
	if err := os.Symlink(outside, filepath.Join(run, "artifacts", "link-1.stdout")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p.dir, filepath.Join(run, "up")); err != nil {
		t.Fatal(err)
	}
	// A run directory that is a symlink to a run elsewhere.
	other := filepath.Join(t.TempDir(), "r2")
	if err := os.CopyFS(other, os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(p.runs, "r2")); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/run/r1/file/..%2F..%2F..%2Fsecret.txt",
		"/run/r1/file/artifacts%2F..%2F..%2F..%2F..%2Fsecret.txt",
		"/run/r1/file/%2Fetc%2Fpasswd",
		"/run/r1/file/artifacts/link-1.stdout",
		"/run/r1/file/up/secret.txt",
		"/run/r1/file/artifacts",
		"/run/..%2F..%2F..%2Fetc/file/passwd",
		"/run/r2",
		"/run/r2/file/state.json",
		"/run/latest",
		"/run/r1/step/link",
	} {
		w := get(s, target)
		if strings.Contains(w.Body.String(), "TOP SECRET") || w.Code == http.StatusOK && !strings.HasPrefix(target, "/run/r1/step/") {
			t.Errorf("GET %s: %d %.100s", target, w.Code, w.Body.String())
		}
	}
	if w := get(s, "/run/r1/file/artifacts/review-1.stdout"); w.Code != http.StatusOK || w.Body.String() != "high\n" {
		t.Errorf("an artifact: %d %q", w.Code, w.Body.String())
	}
	runs, err := Local{Dir: p.runs}.List()
	if err != nil || len(runs) != 1 {
		t.Errorf("the runs list holds the symlinked run: %+v %v", runs, err)
	}
}

// TestAnswerResumesTheRun: answering on the page continues the run as
// resume --answer does; an answer that is not an option, or to another
// question, leaves it waiting.
func TestAnswerResumesTheRun(t *testing.T) {
	p := newProject(t)
	s := p.server()
	page := get(s, "/run/r1").Body.String()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	csrf := m[1]
	for _, f := range []url.Values{
		{"key": {"escalate"}, "answer": {"maybe"}, "csrf": {csrf}},
		{"key": {"review"}, "answer": {"skip"}, "csrf": {csrf}},
	} {
		if w := post(s, "/run/r1/answer", f); w.Code < 400 {
			t.Errorf("POST %v: %d, want a refusal", f, w.Code)
		}
	}
	if p.answered.Load() != 0 || status(t, p) != interp.StatusWaiting {
		t.Fatalf("a wrong answer went through: run %s", status(t, p))
	}
	w := post(s, "/run/r1/answer", url.Values{"key": {"escalate"}, "answer": {"skip"}, "csrf": {csrf}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", w.Code, w.Body.String())
	}
	if got := status(t, p); got != interp.StatusCompleted {
		t.Fatalf("after the answer the run is %s", got)
	}
	out, err := os.ReadFile(filepath.Join(p.runs, "r1", "output.json"))
	if err != nil || !strings.Contains(string(out), `"choice": "skip"`) && !strings.Contains(string(out), `"choice":"skip"`) {
		t.Errorf("output: %s %v", out, err)
	}
	if w := post(s, "/run/r1/answer", url.Values{"key": {"escalate"}, "answer": {"skip"}, "csrf": {csrf}}); w.Code != http.StatusConflict {
		t.Errorf("answering a run that no longer waits: %d", w.Code)
	}
}

// TestLiveStream: the event stream sends the run's state at once, and
// again when the run moves on: a page following a waiting run sees it
// complete without reloading.
func TestLiveStream(t *testing.T) {
	p := newProject(t)
	s := p.server()
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/run/r1/live", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: s.Token()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	updates := make(chan runView)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var v runView
				if json.Unmarshal([]byte(d), &v) == nil {
					updates <- v
				}
			}
		}
		close(updates)
	}()
	first := <-updates
	if first.Status != interp.StatusWaiting || first.Nodes["node-escalate"] != "waiting" || first.Nodes["node-review"] != "done" || first.Waiting == nil {
		t.Fatalf("first update: %+v", first)
	}
	if _, err := interp.Resume(context.Background(), p.pb, filepath.Join(p.runs, "r1"), interp.Options{Workdir: p.dir, NoSync: true, Answers: map[string]string{"escalate": "retry"}}); err != nil {
		t.Fatal(err)
	}
	for v := range updates {
		if v.Status == interp.StatusCompleted {
			if v.Nodes["node-after"] != "done" || v.Nodes["node-escalate"] != "done" || v.Waiting != nil {
				t.Errorf("last update: %+v", v)
			}
			// The page's graph is not drawn again: its title and the
			// path taken come as text and classes for it.
			if v.Title != "run r1: completed" || v.Edges["edge-after--outcome_completed"] != 1 || v.Edges["node-outcome_completed"] != 1 {
				t.Errorf("last update: title %q, path %v", v.Title, v.Edges)
			}
			return
		}
	}
	t.Fatal("the stream ended before the run completed")
}

// TestRunsListFilters: the list shows each run's status, playbook and
// question, filtered by status and playbook.
func TestRunsListFilters(t *testing.T) {
	p := newProject(t)
	s := p.server()
	body := get(s, "/").Body.String()
	for _, want := range []string{`href="/run/r1"`, "waiting", "esc", "escalate: What now?"} {
		if !strings.Contains(body, want) {
			t.Errorf("the runs list lacks %q", want)
		}
	}
	if body := get(s, "/?status=completed").Body.String(); strings.Contains(body, `href="/run/r1"`) {
		t.Errorf("status=completed lists the waiting run")
	}
	if body := get(s, "/?playbook=other").Body.String(); strings.Contains(body, `href="/run/r1"`) {
		t.Errorf("playbook=other lists run r1")
	}
}

// TestStepPage shows a step's attempts with what it printed, and its
// record.
func TestStepPage(t *testing.T) {
	p := newProject(t)
	s := p.server()
	t.Setenv("DEPLOY_TOKEN", "ghp_abcdefghijklmnop")
	s = p.server()
	if err := os.WriteFile(filepath.Join(p.runs, "r1", "artifacts", "review-2.stdout"), []byte("leaked ghp_abcdefghijklmnop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := get(s, "/run/r1/step/review").Body.String()
	for _, want := range []string{"Attempt 1", "high", "artifacts/review-1.stdout", "completed", "[REDACTED]"} {
		if !strings.Contains(body, want) {
			t.Errorf("the step page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "ghp_abcdefghijklmnop") {
		t.Errorf("the step page shows a secret")
	}
	if w := get(s, "/run/nope/step/review"); w.Code != http.StatusNotFound {
		t.Errorf("a missing run: %d", w.Code)
	}
}

func TestReadInside(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644)
	for _, rel := range []string{"", "/a", "../a", "./a", "a/", "a/../a", `..\a`} {
		if _, err := readInside(dir, rel, 10); !errors.Is(err, errOutside) {
			t.Errorf("readInside(%q): %v, want refused", rel, err)
		}
	}
	if b, err := readInside(dir, "a", 10); err != nil || string(b) != "x" {
		t.Errorf("readInside(a) = %q, %v", b, err)
	}
}
