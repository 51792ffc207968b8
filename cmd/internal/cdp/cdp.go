// Package cdp drives a headless Chromium over the DevTools protocol for
// the browser tests of apl's web pages and editors. It talks to Chromium
// on a pipe (--remote-debugging-pipe: commands on fd 3, replies on fd 4,
// each message ending in a NUL), which needs nothing beyond the standard
// library, and records every error the page's console reports so that a
// test can fail on them.
//
// It is for tests only: every method fails the test it was given.
package cdp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Chromium finds a Chromium to drive, or skips the test saying how to get
// one.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed; apt-get install chromium to run the browser tests")
	return ""
}

// Browser is one headless Chromium with one page open.
type Browser struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
	session string
	// errors are what the page's console reported as errors and the
	// exceptions its scripts threw.
	errors []string
	// ignore holds substrings of console errors that are not the page's
	// fault (see Ignore).
	ignore []string
}

// New starts Chromium with a blank page of width×height pixels. It stops
// with the test.
func New(t testing.TB, width, height int) *Browser {
	t.Helper()
	bin := Chromium(t)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, in: cmdW, waiting: map[int]chan json.RawMessage{}}
	// The profile is not a t.TempDir: chromium's helper processes may
	// still be writing to it as the test ends, and the test's cleanup
	// would then fail on a directory that is not empty.
	profile, err := os.MkdirTemp("", "apl-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, outW}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	t.Cleanup(func() {
		cmdW.Close()
		// The whole group: chromium's helpers too.
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		b.cmd.Wait()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	go b.read(outR)
	var target struct{ TargetID string }
	b.Call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	b.Call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.Call(b.session, "Runtime.enable", nil, nil)
	b.Call(b.session, "Page.enable", nil, nil)
	b.Call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// Session is the id of the page's DevTools session, for Call.
func (b *Browser) Session() string { return b.session }

func (b *Browser) read(r *os.File) {
	rd := bufio.NewReader(r)
	for {
		msg, err := rd.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID     int
			Method string
			Result json.RawMessage
			Error  *struct{ Message string }
			Params json.RawMessage
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		switch {
		case m.ID != 0:
			if ch := b.waiting[m.ID]; ch != nil {
				if m.Error != nil {
					m.Result, _ = json.Marshal(map[string]string{"cdpError": m.Error.Message})
				}
				ch <- m.Result
			}
		case m.Method == "Runtime.exceptionThrown":
			b.errors = append(b.errors, "exception: "+string(m.Params))
		case m.Method == "Runtime.consoleAPICalled" && strings.Contains(string(m.Params), `"type":"error"`):
			b.errors = append(b.errors, "console.error: "+string(m.Params))
		}
		b.mu.Unlock()
	}
}

// Call sends a DevTools command and decodes its result into out.
func (b *Browser) Call(session, method string, params any, out any) {
	b.t.Helper()
	if err := b.Try(session, method, params, out); err != nil {
		b.t.Fatal(err)
	}
}

// Try is Call that returns chromium's error instead of failing the test.
func (b *Browser) Try(session, method string, params any, out any) error {
	b.t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan json.RawMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	select {
	case res := <-ch:
		if strings.Contains(string(res), `"cdpError"`) {
			return fmt.Errorf("%s: %s", method, res)
		}
		if out != nil {
			if err := json.Unmarshal(res, out); err != nil {
				return fmt.Errorf("%s: %v: %s", method, err, res)
			}
		}
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("%s: no reply from chromium", method)
	}
}

// Eval evaluates a JavaScript expression in the page and returns its
// value as JSON text.
func (b *Browser) Eval(expr string) string {
	b.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails json.RawMessage
	}
	b.Call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		b.t.Fatalf("%s: %s", expr, res.ExceptionDetails)
	}
	return string(res.Result.Value)
}

// Until waits up to limit for a JavaScript condition to hold in the
// page. The limit only ends a test that would otherwise hang; nothing is
// timed.
func (b *Browser) Until(what, expr string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	// A page being replaced has no body for a moment, and a page being
	// navigated away from cannot evaluate at all: both are "not yet".
	holds := func() bool {
		var res struct {
			Result struct{ Value json.RawMessage }
		}
		err := b.Try(b.session, "Runtime.evaluate", map[string]any{
			"expression":    "(function () { try { return !!(" + expr + "); } catch (e) { return false; } })()",
			"returnByValue": true,
		}, &res)
		return err == nil && string(res.Result.Value) == "true"
	}
	for !holds() {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %s never held; the page (%s) says:\n%.3000s", what, expr, b.Eval("location.href"), b.Eval("document.body ? document.body.innerText : ''"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Open navigates the page to url.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.Call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// Key presses and releases one key, such as "Enter", "F12" or "s", with
// modifiers (1 Alt, 2 Ctrl, 4 Meta, 8 Shift).
func (b *Browser) Key(key string, modifiers int) {
	b.t.Helper()
	code, vk, text := keyCode(key)
	down := map[string]any{"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers}
	if text != "" && modifiers&^8 == 0 {
		down["text"] = text
	}
	b.Call(b.session, "Input.dispatchKeyEvent", down, nil)
	b.Call(b.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers}, nil)
}

// keyCode is the DOM code, the virtual key code and the text of a key.
func keyCode(key string) (code string, vk int, text string) {
	switch key {
	case "Enter":
		return "Enter", 13, "\r"
	case "Escape":
		return "Escape", 27, ""
	case "Backspace":
		return "Backspace", 8, ""
	case "Tab":
		return "Tab", 9, ""
	case "F12":
		return "F12", 123, ""
	case ".":
		return "Period", 190, "."
	}
	if len(key) == 1 {
		c := key[0]
		switch {
		case c >= 'a' && c <= 'z':
			return "Key" + strings.ToUpper(key), int(c - 'a' + 'A'), key
		case c >= 'A' && c <= 'Z':
			return "Key" + key, int(c), key
		case c >= '0' && c <= '9':
			return "Digit" + key, int(c), key
		case c == ' ':
			return "Space", 32, " "
		}
	}
	return key, 0, key
}

// Type inserts text as if typed, into whatever has the focus.
func (b *Browser) Type(text string) {
	b.t.Helper()
	b.Call(b.session, "Input.insertText", map[string]any{"text": text}, nil)
}

// Hover moves the mouse to (x, y) in the page's CSS pixels.
func (b *Browser) Hover(x, y float64) {
	b.t.Helper()
	b.Call(b.session, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y}, nil)
}

// Ignore makes NoErrors pass over console errors that contain s: those
// of a page the test does not own (an editor's own warnings), not of
// what it tests.
func (b *Browser) Ignore(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ignore = append(b.ignore, s)
}

// NoErrors fails the test on any console error the page reported.
func (b *Browser) NoErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, e := range b.errors {
		for _, s := range b.ignore {
			if strings.Contains(e, s) {
				continue next
			}
		}
		b.t.Errorf("the page's console: %.500s", e)
	}
}

// Screenshot writes the page as a PNG to path (for looking at it): all of
// it when full, else what the window shows (a full capture lays the page
// out again, which closes an editor's hovers and menus).
func (b *Browser) Screenshot(path string, full bool) {
	b.t.Helper()
	var shot struct{ Data []byte }
	b.Call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full}, &shot)
	if err := os.WriteFile(path, shot.Data, 0o644); err != nil {
		b.t.Error(err)
	}
}

// Click clicks the left mouse button at (x, y) in the page's CSS pixels.
func (b *Browser) Click(x, y float64) {
	b.t.Helper()
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		b.Call(b.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

// Center is the centre of the first element that a JavaScript
// expression returns, in the page's CSS pixels, for Click and Hover.
func (b *Browser) Center(expr string) (x, y float64) {
	b.t.Helper()
	var p struct{ X, Y float64 }
	out := b.Eval(`(function () { const r = (` + expr + `).getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		b.t.Fatalf("%s: %v: %s", expr, err, out)
	}
	return p.X, p.Y
}

// Errors are the console errors and exceptions the page reported so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}
