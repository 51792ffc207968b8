package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateSARIF checks validate --format sarif against what the SARIF
// 2.1.0 schema requires of the properties apl writes: a version and runs;
// per run a tool with a driver that has a name; per result a message with
// text, a level of the schema's enum, a ruleId the driver's rules declare
// (at ruleIndex), and locations whose regions count lines and columns
// from 1 and do not end before they start.
func TestValidateSARIF(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bad := "bad.hcl"
	src := `playbook "bad" {}

input "unused" {
  default = 1
}

step "one" {
  next = "tow"
  shell {
    command = ["true"]
  }
}

step "two" {
  shell {
    command = ["true"]
  }
}
`
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"validate", "--format", "sarif", bad}, &stdout, &stderr); code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFailed, stderr.String())
	}

	var log struct {
		Version *string `json:"version"`
		Schema  string  `json:"$schema"`
		Runs    []struct {
			Tool *struct {
				Driver *struct {
					Name  *string `json:"name"`
					Rules []struct {
						ID               *string `json:"id"`
						ShortDescription struct {
							Text *string `json:"text"`
						} `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    *string `json:"ruleId"`
				RuleIndex *int    `json:"ruleIndex"`
				Level     string  `json:"level"`
				Message   *struct {
					Text *string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation *struct {
							URI *string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine, StartColumn, EndLine, EndColumn *int
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if log.Version == nil || *log.Version != "2.1.0" {
		t.Fatalf("version = %v, want 2.1.0", log.Version)
	}
	if log.Schema == "" {
		t.Error("no $schema")
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool == nil || run.Tool.Driver == nil || run.Tool.Driver.Name == nil || *run.Tool.Driver.Name != "apl" {
		t.Fatalf("runs[0].tool.driver.name is not apl")
	}
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		if r.ID == nil || *r.ID == "" || r.ShortDescription.Text == nil {
			t.Errorf("rule without id or shortDescription.text")
			continue
		}
		if slices.Contains(ids, *r.ID) {
			t.Errorf("rule %q declared twice", *r.ID)
		}
		ids = append(ids, *r.ID)
	}
	var got []string
	for i, res := range run.Results {
		if res.Message == nil || res.Message.Text == nil || *res.Message.Text == "" {
			t.Errorf("results[%d] has no message.text", i)
		}
		if !slices.Contains([]string{"none", "note", "warning", "error"}, res.Level) {
			t.Errorf("results[%d].level = %q", i, res.Level)
		}
		if res.RuleID == nil || res.RuleIndex == nil || *res.RuleIndex >= len(ids) || ids[*res.RuleIndex] != *res.RuleID {
			t.Errorf("results[%d]: ruleId and ruleIndex do not name a declared rule", i)
			continue
		}
		if len(res.Locations) != 1 {
			t.Errorf("results[%d] has %d locations, want 1", i, len(res.Locations))
			continue
		}
		pl := res.Locations[0].PhysicalLocation
		if pl == nil || pl.ArtifactLocation == nil || pl.ArtifactLocation.URI == nil || pl.Region == nil {
			t.Errorf("results[%d]: no physicalLocation with artifactLocation.uri and region", i)
			continue
		}
		r := pl.Region
		if r.StartLine == nil || r.StartColumn == nil || r.EndLine == nil || r.EndColumn == nil ||
			*r.StartLine < 1 || *r.StartColumn < 1 || *r.EndLine < *r.StartLine || *r.EndLine == *r.StartLine && *r.EndColumn <= *r.StartColumn {
			t.Errorf("results[%d].region is not a range: %+v", i, r)
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %s:%d:%d", res.Level, *res.RuleID, *pl.ArtifactLocation.URI, *r.StartLine, *r.StartColumn))
	}
	want := []string{
		"error reference-to-undeclared-step bad.hcl:8:10",
		"warning unreachable-step bad.hcl:14:1",
		"warning unused-input bad.hcl:3:1",
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
