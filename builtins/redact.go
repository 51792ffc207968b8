package builtins

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
)

// Redacted replaces a secret in everything apl writes.
const Redacted = "[REDACTED]"

// A Redactor removes secrets from text before it is written: state files,
// journals, traces, artifacts, output. Secrets are the values of
// environment variables whose names mark them as keys (…_KEY, which
// covers …_API_KEY, …_TOKEN, …_SECRET, …_PASSWORD) and of variables named
// explicitly (a driver's api_key_env), whatever their length. Each is
// replaced in its raw and its JSON-escaped spellings (<, > and & escaped
// or not), so JSON documents are redacted too. Values shorter than 8
// bytes are left alone: redacting "1" would mangle any text. The zero
// Redactor and nil redact nothing.
type Redactor struct {
	r       *strings.Replacer
	secrets []string
}

// NewRedactor collects the secrets in environ (KEY=VALUE pairs, as
// os.Environ gives them), treating the variables in names as secrets
// whatever they are called.
func NewRedactor(environ []string, names ...string) *Redactor {
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	seen := map[string]bool{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		// A variable named as a secret is one whatever its length.
		if !ok || v == "" || !(named[k] || secretName(k) && len(v) >= 8) {
			continue
		}
		seen[v] = true
		// encoding/json escapes <, > and & (json.Marshal); apl's own
		// encoders of traces and large outputs do not (AppendJSONString).
		for _, q := range []string{mustMarshal(v), string(AppendJSONString(nil, v))} {
			if esc := q[1 : len(q)-1]; esc != v {
				seen[esc] = true
			}
		}
	}
	if len(seen) == 0 {
		return &Redactor{}
	}
	// Longest first, so that a secret containing another is redacted whole.
	vals := slices.Collect(func(yield func(string) bool) {
		for v := range seen {
			if !yield(v) {
				return
			}
		}
	})
	slices.SortFunc(vals, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...), secrets: vals}
}

func mustMarshal(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// EnvRedactor is NewRedactor over the process environment.
func EnvRedactor(names ...string) *Redactor { return NewRedactor(os.Environ(), names...) }

func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, suffix := range []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced; s itself, without a copy,
// when it holds none (a large answer is looked through, not rebuilt).
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			return r.r.Replace(s)
		}
	}
	return s
}

// Bytes returns b with every secret replaced; b itself when it holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.r == nil {
		return b
	}
	for _, v := range r.secrets {
		if bytes.Contains(b, []byte(v)) {
			return []byte(r.r.Replace(string(b)))
		}
	}
	return b
}

// Active reports whether there is anything to redact.
func (r *Redactor) Active() bool { return r != nil && r.r != nil }
