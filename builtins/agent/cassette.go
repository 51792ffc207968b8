package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Cassette modes.
const (
	// CassetteRecord calls the inner driver and appends every call.
	CassetteRecord = "record"
	// CassetteReplay answers only from the file.
	CassetteReplay = "replay"
	// CassetteRecordMissing replays what the file has and records the rest.
	CassetteRecordMissing = "record-missing"
)

// ErrCassetteMiss is wrapped by the error a replaying cassette returns for a
// call it has no recording of.
var ErrCassetteMiss = errors.New("no recorded response")

// CassetteRequest is the part of a Request that identifies a call in a
// cassette. Run id, attempt, work directory, item key, session and timeout
// are left out: they change between runs without changing the question.
type CassetteRequest struct {
	Step   string         `json:"step"`
	Agent  string         `json:"agent"`
	Model  string         `json:"model,omitempty"`
	Prompt string         `json:"prompt"`
	System string         `json:"system,omitempty"`
	Schema map[string]any `json:"schema,omitempty"`
}

// CassetteEntry is one line of a cassette file.
type CassetteEntry struct {
	// Key is the sha256 (hex) of the JSON of Request.
	Key string `json:"key"`
	// Seq numbers the calls with the same key from 0, so repeated identical
	// calls replay in the order they were recorded.
	Seq      int              `json:"seq"`
	Request  CassetteRequest  `json:"request"`
	Response CassetteResponse `json:"response"`
}

// CassetteResponse is a Response as a cassette stores it: Raw is kept as a
// string, since Response leaves it out of its JSON.
type CassetteResponse struct {
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured,omitempty"`
	SessionID  string          `json:"session_id,omitempty"`
	Usage      Usage           `json:"usage"`
	CostUSD    *float64        `json:"cost_usd"`
	Raw        string          `json:"raw,omitempty"`
}

// Cassette records agent calls to a JSONL file or replays them. It holds
// the numbering of the calls, so that one Cassette may serve many drivers
// (each through Wrap) and still number the calls of a run once per key,
// whichever driver makes them.
type Cassette struct {
	path string
	mode string

	mu       sync.Mutex
	recorded map[string]map[int]CassetteEntry // key → seq → entry, from the file
	next     map[string]int                   // key → seq of the next call
}

// OpenCassette reads the JSONL file at path for mode (CassetteRecord,
// CassetteReplay or CassetteRecordMissing). Calls are keyed by a hash of
// CassetteRequest and numbered by Seq among equal keys.
//
// Recording appends to the file, one line per call in a single O_APPEND
// write, and numbers new calls after those already in it; to record afresh,
// remove the file first. Failed calls are not recorded. Values of
// environment variables named *_KEY, *_TOKEN or *_SECRET are scrubbed from
// every line written.
func OpenCassette(path string, mode string) (*Cassette, error) {
	switch mode {
	case CassetteRecord, CassetteRecordMissing, CassetteReplay:
	default:
		return nil, fmt.Errorf("cassette %s: unknown mode %q (want record, replay or record-missing)", path, mode)
	}
	c := &Cassette{path: path, mode: mode, recorded: map[string]map[int]CassetteEntry{}, next: map[string]int{}}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadCassette is a replaying cassette of the entries in data, a
// cassette file's contents; name stands for the file in messages. It
// reads and writes no file, so a process that cannot reach the file (a
// Temporal workflow) replays what another read.
func ReadCassette(name string, data []byte) (*Cassette, error) {
	c := &Cassette{path: name, mode: CassetteReplay, recorded: map[string]map[int]CassetteEntry{}, next: map[string]int{}}
	if err := c.parse(data); err != nil {
		return nil, err
	}
	return c, nil
}

// NewCassette opens the cassette at path and wraps inner in it; see
// OpenCassette. Replay needs no inner driver (inner may be nil).
func NewCassette(inner Driver, path string, mode string) (Driver, error) {
	if inner == nil && (mode == CassetteRecord || mode == CassetteRecordMissing) {
		return nil, fmt.Errorf("cassette %s: mode %s needs a driver to record", path, mode)
	}
	c, err := OpenCassette(path, mode)
	if err != nil {
		return nil, err
	}
	return c.Wrap(inner), nil
}

// Wrap returns d behind the cassette: calls are answered from the file or
// passed to d and recorded, per the mode. d may be nil to replay; a call
// that would need it then fails.
func (c *Cassette) Wrap(d Driver) Driver { return taped{c, d} }

// taped is a driver behind a cassette.
type taped struct {
	c     *Cassette
	inner Driver
}

// Call answers from the cassette or the inner driver.
func (t taped) Call(ctx context.Context, req Request) (Response, error) {
	return t.c.call(ctx, t.inner, req)
}

// load reads the entries already in the file. A missing file is empty,
// except to replay.
func (c *Cassette) load() error {
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) && c.mode != CassetteReplay {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	return c.parse(data)
}

// parse reads a cassette file's entries.
func (c *Cassette) parse(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e CassetteEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("cassette %s:%d: %w", c.path, n, err)
		}
		if e.Key == "" {
			return fmt.Errorf("cassette %s:%d: entry has no key", c.path, n)
		}
		if c.recorded[e.Key] == nil {
			c.recorded[e.Key] = map[int]CassetteEntry{}
		}
		c.recorded[e.Key][e.Seq] = e
	}
	return sc.Err()
}

// call answers from the file or inner, per the mode.
func (c *Cassette) call(ctx context.Context, inner Driver, req Request) (Response, error) {
	creq := CassetteRequest{Step: req.Step, Agent: req.Agent, Model: req.Model, Prompt: req.Prompt, System: req.System, Schema: req.Schema}
	key, err := CassetteKey(creq)
	if err != nil {
		return Response{}, err
	}
	c.mu.Lock()
	seq := c.next[key]
	c.next[key]++
	entry, hit := c.recorded[key][seq]
	if c.mode == CassetteRecord {
		// Number after what the file already holds.
		for hit {
			seq = c.next[key]
			c.next[key]++
			entry, hit = c.recorded[key][seq]
		}
	}
	c.mu.Unlock()

	if hit {
		return entry.Response.response(), nil
	}
	if c.mode == CassetteReplay {
		return Response{}, fmt.Errorf("cassette %s: %w for step %q (agent %q, key %s, call %d of this request)",
			c.path, ErrCassetteMiss, req.Step, req.Agent, key, seq)
	}
	if inner == nil {
		return Response{}, fmt.Errorf("cassette %s: mode %s needs a driver to record", c.path, c.mode)
	}
	resp, err := inner.Call(ctx, req)
	if err != nil {
		return resp, err
	}
	e := CassetteEntry{Key: key, Seq: seq, Request: creq, Response: cassetteResponse(resp)}
	if err := c.append(e); err != nil {
		return resp, err
	}
	// Hand back what a replay will: the stored form.
	return e.Response.response(), nil
}

// CassetteKey returns the key of a request: the hex sha256 of its JSON.
func CassetteKey(r CassetteRequest) (string, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("cassette key: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// append writes one entry as one line, scrubbed, in one write.
func (c *Cassette) append(e CassetteEntry) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("cassette %s: %w", c.path, err)
	}
	line := redactor(nil).String(buf.String())
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cassette %s: %w", c.path, err)
	}
	return nil
}

// cassetteResponse is the stored form of r. Structured is compacted, as
// JSON encoding would do anyway.
func cassetteResponse(r Response) CassetteResponse {
	cr := CassetteResponse{Text: r.Text, SessionID: r.SessionID, Usage: r.Usage, CostUSD: r.CostUSD, Raw: string(r.Raw)}
	if len(r.Structured) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, r.Structured) == nil {
			cr.Structured = buf.Bytes()
		} else if q, err := json.Marshal(string(r.Structured)); err == nil {
			cr.Structured = q // not JSON: kept as a string rather than lost
		}
	}
	return cr
}

// response is the Response a stored entry replays as.
func (cr CassetteResponse) response() Response {
	r := Response{Text: cr.Text, SessionID: cr.SessionID, Usage: cr.Usage, CostUSD: cr.CostUSD}
	if len(cr.Structured) > 0 {
		r.Structured = append(json.RawMessage(nil), cr.Structured...)
	}
	if cr.Raw != "" {
		r.Raw = []byte(cr.Raw)
	}
	if cr.CostUSD != nil {
		c := *cr.CostUSD
		r.CostUSD = &c
	}
	return r
}
