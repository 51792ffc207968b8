package builtins

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func call(name string, env Env, attrs map[string]cty.Value) (cty.Value, error) {
	args := cty.EmptyObjectVal
	if len(attrs) > 0 {
		args = cty.ObjectVal(attrs)
	}
	return Funcs().Call(context.Background(), name, env, args)
}

func str(s string) cty.Value { return cty.StringVal(s) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFileFuncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Env{Workdir: dir}
	writeFile(t, filepath.Join(dir, "spec.md"), "hello\n")
	writeFile(t, filepath.Join(dir, "data.json"), `{"phase": 3, "tags": ["a"]}`)
	writeFile(t, filepath.Join(dir, "bad.json"), `{"phase": `)

	tests := []struct {
		name string
		fn   string
		args map[string]cty.Value
		want cty.Value
	}{
		{name: "sha256", fn: "file.sha256", args: map[string]cty.Value{"path": str("spec.md")}, want: cty.ObjectVal(map[string]cty.Value{
			// printf 'hello\n' | sha256sum
			"sha256": str("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"),
			"size":   cty.NumberIntVal(6),
		})},
		{name: "read", fn: "file.read", args: map[string]cty.Value{"path": str("spec.md")}, want: cty.ObjectVal(map[string]cty.Value{
			"content": str("hello\n"), "exists": cty.True,
		})},
		{name: "read missing", fn: "file.read", args: map[string]cty.Value{"path": str("nope/none.md")}, want: cty.ObjectVal(map[string]cty.Value{
			"content": str(""), "exists": cty.False,
		})},
		{name: "json.read", fn: "json.read", args: map[string]cty.Value{"path": str("data.json")}, want: cty.ObjectVal(map[string]cty.Value{
			"value": cty.ObjectVal(map[string]cty.Value{"phase": cty.NumberIntVal(3), "tags": cty.TupleVal([]cty.Value{str("a")})}),
		})},
		{name: "write", fn: "file.write", args: map[string]cty.Value{"path": str("out/deep/a.txt"), "content": str("héllo")}, want: cty.ObjectVal(map[string]cty.Value{
			"path": str("out/deep/a.txt"), "bytes": cty.NumberIntVal(6),
		})},
		{name: "write empty", fn: "file.write", args: map[string]cty.Value{"path": str(filepath.Join(dir, "empty")), "content": str("")}, want: cty.ObjectVal(map[string]cty.Value{
			"path": str("empty"), "bytes": cty.NumberIntVal(0),
		})},
		{name: "append", fn: "file.append", args: map[string]cty.Value{"path": str("log/a.log"), "content": str("one\n")}, want: cty.ObjectVal(map[string]cty.Value{
			"path": str("log/a.log"), "bytes": cty.NumberIntVal(4),
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(tt.fn, env, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
	if got := readString(t, filepath.Join(dir, "out/deep/a.txt")); got != "héllo" {
		t.Errorf("file.write wrote %q", got)
	}
}

func TestFileFuncErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Env{Workdir: dir}
	writeFile(t, filepath.Join(dir, "bad.json"), `{"phase": `)
	tests := []struct {
		fn      string
		args    cty.Value
		wantErr string
	}{
		{"file.sha256", cty.EmptyObjectVal, `file.sha256: argument "path" is required`},
		{"file.sha256", cty.ObjectVal(map[string]cty.Value{"path": str("")}), `file.sha256: argument "path" is required`},
		{"file.sha256", cty.ObjectVal(map[string]cty.Value{"path": str("missing")}), "file.sha256: open"},
		{"file.sha256", cty.ObjectVal(map[string]cty.Value{"pth": str("x")}), `file.sha256: unsupported argument "pth"; the arguments are "path"`},
		{"file.sha256", cty.ObjectVal(map[string]cty.Value{"path": cty.ListValEmpty(cty.String)}), `argument "path" must be a string, not list of string`},
		{"file.sha256", str("spec.md"), "file.sha256: arguments must be an object, not string"},
		{"file.sha256", cty.ObjectVal(map[string]cty.Value{"path": cty.UnknownVal(cty.String)}), "not known yet"},
		{"file.read", cty.ObjectVal(map[string]cty.Value{"path": str("../etc/passwd")}), `file.read: argument "path": "../etc/passwd": path is outside the working directory`},
		{"file.read", cty.ObjectVal(map[string]cty.Value{"path": str("/etc/passwd")}), `outside the working directory`},
		{"file.write", cty.ObjectVal(map[string]cty.Value{"path": str("x")}), `file.write: argument "content" is required`},
		{"file.write", cty.ObjectVal(map[string]cty.Value{"path": str("x"), "content": str(""), "mode": str("rwx")}), `file.write: argument "mode" must be octal permission digits`},
		{"file.write", cty.ObjectVal(map[string]cty.Value{"path": str("x"), "content": str(""), "mode": str("1777")}), `argument "mode" must be octal`},
		{"file.append", cty.ObjectVal(map[string]cty.Value{"path": str("../x"), "content": str("")}), "outside the working directory"},
		{"jsonl.append", cty.ObjectVal(map[string]cty.Value{"path": str("x.jsonl")}), `jsonl.append: argument "record" is required`},
		{"jsonl.append", cty.ObjectVal(map[string]cty.Value{"path": str("x.jsonl"), "record": str("s")}), `argument "record" must be an object, not string`},
		{"json.read", cty.ObjectVal(map[string]cty.Value{"path": str("bad.json")}), "json.read: bad.json is not valid JSON: unexpected EOF"},
		{"json.read", cty.ObjectVal(map[string]cty.Value{"path": str("none.json")}), "json.read: open"},
		{"glob", cty.ObjectVal(map[string]cty.Value{"pattern": str("[")}), `glob: argument "pattern": "[": syntax error in pattern`},
		{"glob", cty.ObjectVal(map[string]cty.Value{"pattern": str("../*")}), "outside the working directory"},
		{"no.such", cty.EmptyObjectVal, `unknown builtin "no.such"`},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr, func(t *testing.T) {
			_, err := Funcs().Call(context.Background(), tt.fn, env, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a refused jsonl.append created its file (stat: %v)", err)
	}
}

func TestFileWriteModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Env{Workdir: dir}
	write := func(path string, mode cty.Value) {
		t.Helper()
		args := map[string]cty.Value{"path": str(path), "content": str("x")}
		if mode != cty.NilVal {
			args["mode"] = mode
		}
		if _, err := call("file.write", env, args); err != nil {
			t.Fatal(err)
		}
	}
	perm := func(path string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	write("new", cty.NilVal)
	write("script.sh", str("0755"))
	write("hcl-number", cty.NumberIntVal(600))
	write("null-mode", cty.NullVal(cty.String))
	got := map[string]os.FileMode{"new": perm("new"), "script.sh": perm("script.sh"), "hcl-number": perm("hcl-number"), "null-mode": perm("null-mode")}
	want := map[string]os.FileMode{"new": 0o644, "script.sh": 0o755, "hcl-number": 0o600, "null-mode": 0o644}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	// Rewriting without a mode keeps the file's permissions.
	write("script.sh", cty.NilVal)
	if p := perm("script.sh"); p != 0o755 {
		t.Errorf("rewrite changed mode to %o", p)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteFileAtomicReplacesSymlinkTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "real.txt"), "old")
	if err := os.Symlink("real.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	got, err := call("file.write", Env{Workdir: dir}, map[string]cty.Value{"path": str("link.txt"), "content": str("new")})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.GetAttr("path").AsString(); p != "real.txt" {
		t.Errorf("path = %q, want the resolved real.txt", p)
	}
	if s := readString(t, filepath.Join(dir, "real.txt")); s != "new" {
		t.Errorf("real.txt = %q", s)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink: %v", err)
	}
}

func TestJSONLAppendConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Env{Workdir: dir}
	const writers, each = 8, 25
	long := strings.Repeat("x", 5000) // bigger than most stdio buffers
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := call("jsonl.append", env, map[string]cty.Value{
					"path": str(".apl/trace.jsonl"),
					"record": cty.ObjectVal(map[string]cty.Value{
						"id":   str(fmt.Sprintf("%d-%d", w, i)),
						"pad":  str(long),
						"html": str("<b>"),
					}),
				})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, ".apl/trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		v, err := JSONToCty(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d is not one JSON record: %v", len(seen)+1, err)
		}
		seen[v.GetAttr("id").AsString()] = true
		if v.GetAttr("html").AsString() != "<b>" || !strings.Contains(sc.Text(), `"<b>"`) {
			t.Errorf("html escaped or altered: %.80s", sc.Text())
		}
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
