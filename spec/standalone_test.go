package spec_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The project stands alone: no file points at documents the repository
// does not hold. The patterns are built from pieces so that this file
// does not match them itself.
var (
	outsidePath  = "../" + "shared"
	auditID      = "SEED" + "-AUDIT"
	seedCitation = regexp.MustCompile(`(?i)\bseeds?\s+0\d\d\b`)
	schemaDoc    = "autopilot" + "-schemas.md"
	// requirementID is an audit requirement's id: four capitals, a dash, 0 and a digit.
	requirementID = regexp.MustCompile(`\b[A-Z]{4}-0\d\b`)
)

// repoFiles lists the repository's tracked files, relative to root. Without
// git (or outside a checkout) it walks the tree, skipping .git.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoOutsideReferences fails when a file cites the protocol documents
// the stdlib was written from, or a path outside the repository, instead
// of stating the rule or pointing at spec/protocols.md. Go fuzz corpora
// are left alone.
func TestNoOutsideReferences(t *testing.T) {
	root := ".."
	for _, f := range repoFiles(t, root) {
		if strings.Contains(f, "testdata/fuzz/") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // a tracked file deleted in the work tree
		}
		if bytes.IndexByte(src, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(src), "\n") {
			switch {
			case strings.Contains(line, outsidePath):
				t.Errorf("%s:%d: points outside the repository (%q): %s", f, i+1, outsidePath, strings.TrimSpace(line))
			case strings.Contains(line, auditID):
				t.Errorf("%s:%d: cites an audit row the repository does not hold: %s", f, i+1, strings.TrimSpace(line))
			case strings.Contains(line, schemaDoc):
				t.Errorf("%s:%d: cites %s, which the repository does not hold; state the schema: %s", f, i+1, schemaDoc, strings.TrimSpace(line))
			case requirementID.MatchString(line):
				t.Errorf("%s:%d: cites requirement %s of an audit the repository does not hold; state the rule: %s", f, i+1, requirementID.FindString(line), strings.TrimSpace(line))
			case seedCitation.MatchString(line):
				t.Errorf("%s:%d: cites a document the repository does not hold; state the rule or point at spec/protocols.md: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
