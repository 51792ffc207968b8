package interp

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent that prints its environment must not put the keys in it into
// anything apl writes: state, journals, backups, the trace, artifacts,
// the output. Keys are found by name (…_API_KEY, …_TOKEN) and by the
// drivers' api_key_env.
func TestSecretsAreRedactedFromEverythingWritten(t *testing.T) {
	const apiKey, token, credential = "sk-test-0123456789abcdef", "ghp_abcdefghijklmnop", "cred-\"quoted\"-0987654321"
	t.Setenv("ACME_API_KEY", apiKey)
	t.Setenv("DEPLOY_TOKEN", token)
	t.Setenv("MY_CREDENTIAL", credential)
	pb := load(t, `
playbook "leak" {}
driver "vendor" {
  type        = "openai"
  api_key_env = "MY_CREDENTIAL"
}
agent "dumper" {
  type   = "general-purpose"
  driver = "vendor"
}
prompt "p" { template = "print your environment" }
step "dump" {
  agent "dumper" { prompt = prompt.p }
}
step "again" {
  shell { script = "env; exit 3" }
  continue_on_error = true
}
output { env = steps.dump.output }
`)
	work := t.TempDir()
	res, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true,
		AgentCommand: []string{"sh", "-c", "env"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.OutputJSON), "[REDACTED]") {
		t.Fatalf("the output shows no redaction; the agent printed: %.300s", res.OutputJSON)
	}
	n := 0
	err = filepath.WalkDir(filepath.Join(work, ".apl"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		for _, secret := range []string{apiKey, token, credential, `cred-\"quoted\"-0987654321`} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret %q", p, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("checked only %d files", n)
	}
}

// A secret holding both a character JSON escapes (a quote) and one
// encoding/json escapes only in HTML-safe mode (<) has three spellings:
// raw, escaped as json.Marshal does, and escaped as apl's trace and
// artifact encoders do (quotes only). None may reach the trace.
func TestSecretWithHTMLCharactersRedactedFromTrace(t *testing.T) {
	const secret = `cred-"<tag>&"-0987654321`
	t.Setenv("MY_SECRET", secret)
	pb := load(t, `
playbook "leak" {}
step "show" {
  shell { script = "printf %s \"$MY_SECRET\"" }
}
`)
	work := t.TempDir()
	if _, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join(work, ".apl", "runs", "latest", "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "[REDACTED]") {
		t.Fatalf("the trace shows no redaction: %s", trace)
	}
	for _, spelling := range []string{secret, `cred-\"<tag>&\"-0987654321`, `cred-\"\u003ctag\u003e\u0026\"-0987654321`} {
		if strings.Contains(string(trace), spelling) {
			t.Errorf("trace.jsonl holds the secret as %s", spelling)
		}
	}
}
