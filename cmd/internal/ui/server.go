package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
)

// Options configure a Server.
type Options struct {
	// Runs is where runs are read.
	Runs Runs
	// Where says, under the runs list's title, where its runs are
	// (".apl/runs", "namespace N of Temporal at HOST:PORT"). Optional.
	Where string
	// Load loads a playbook by reference (a path or stdlib:NAME), to draw
	// a run's graph and to show a playbook before any run.
	Load func(ref string) (*lang.Playbook, error)
	// LoadRun loads the playbook a run runs, when its reference alone
	// does not find it here: a run on Temporal keeps the sources it
	// started with, from whichever checkout that was. Nil: Load(its
	// reference).
	LoadRun func(run *Run) (*lang.Playbook, error)
	// Answer answers run id's waiting question key (STEP or STEP[ITEM])
	// with answer and lets the run go on, as apl resume --answer does. It
	// returns once the run has taken the answer or refused it; the run
	// goes on after it returns, and should go on after the server ends
	// (apl ui starts apl resume as a process of its own).
	Answer func(ctx context.Context, id, key, answer string) error
	// DryRun is the path a dry run of pb takes with inputs given as
	// NAME=VALUE strings and the mocks of a test file (optional), as apl
	// graph --dry-run draws it. Nil: the playbook view draws no path.
	DryRun func(pb *lang.Playbook, ref string, inputs []string, mocks string) (*draw.Run, error)
	// Plan is apl plan's worst case per step of pb, as text (step name →
	// "3 agent calls, 120k tokens"). Nil: not shown.
	Plan func(pb *lang.Playbook) map[string]string
	// Render lays out DOT as SVG (draw.Render when nil).
	Render func(dot, format string) ([]byte, error)
	// Token is the secret every request must carry; a random one when
	// empty.
	Token string
	// Hosts are the host names the server answers to besides loopback's
	// (127.0.0.1, ::1, localhost): the address it listens on when that
	// is not loopback. A request naming another Host is refused, so a
	// page of another site cannot reach the server through a DNS name it
	// points at 127.0.0.1.
	Hosts []string
	// Poll is how often the live view looks for a change (default 400 ms).
	Poll time.Duration
}

// Server is apl ui's HTTP handler.
type Server struct {
	opts     Options
	csrf     string
	mux      *http.ServeMux
	redactor *builtins.Redactor
}

// cookieName holds the token once the URL has given it.
const cookieName = "apl_ui_token"

// New returns a server; its Token is opts.Token or a random one.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = randomToken()
	}
	if opts.Render == nil {
		opts.Render = draw.Render
	}
	if opts.Poll == 0 {
		opts.Poll = 400 * time.Millisecond
	}
	s := &Server{opts: opts, csrf: randomToken(), mux: http.NewServeMux(), redactor: builtins.EnvRedactor()}
	s.routes()
	return s
}

// Token is the secret the URL must carry.
func (s *Server) Token() string { return s.opts.Token }

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// ServeHTTP checks every request before any handler sees it: the Host, the
// Origin, the token, and on a POST the CSRF token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer Chromium sends a
	// form's POST with Origin: null, which the Origin check refuses.
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'")
	if !s.hostAllowed(r.Host) {
		http.Error(w, "apl ui: this server answers only to localhost (Host "+r.Host+" refused)", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o, r.Host) {
		http.Error(w, "apl ui: cross-origin request refused", http.StatusForbidden)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" {
		if !s.tokenOK(t) {
			http.Error(w, "apl ui: wrong token; open the URL apl ui printed", http.StatusForbidden)
			return
		}
		// The token moves into a cookie and out of the address bar, where
		// it would be copied along with a link.
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.Method == http.MethodGet {
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
	} else if c, err := r.Cookie(cookieName); err != nil || !s.tokenOK(c.Value) {
		http.Error(w, "apl ui: this page needs the token in the URL apl ui printed", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// A POST carries the page's CSRF token in a header or a field,
		// which another site's form cannot know.
		t := r.Header.Get("X-APL-CSRF")
		if t == "" {
			t = r.PostFormValue("csrf")
		}
		if subtle.ConstantTimeCompare([]byte(t), []byte(s.csrf)) != 1 {
			http.Error(w, "apl ui: missing or wrong CSRF token; reload the page", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// hostAllowed says whether a Host header names this server: loopback by
// any of its names, or one of opts.Hosts, with any port.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") || slices.ContainsFunc(s.opts.Hosts, func(h string) bool { return strings.EqualFold(h, host) }) {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed says whether an Origin header is this server's own page:
// http, and the very host and port the request was sent to.
func (s *Server) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" {
		return false
	}
	return strings.EqualFold(u.Host, host) && s.hostAllowed(u.Host)
}
