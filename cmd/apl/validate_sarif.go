package main

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/), the
// subset code-scanning tools read: one run, apl as its tool, a rule per
// kind of diagnostic, and a result per diagnostic with its location.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

// sarifBuilder collects the diagnostics of every validated path into one
// SARIF run.
type sarifBuilder struct {
	run   sarifRun
	rules map[string]int
}

func newSARIF() *sarifBuilder {
	return &sarifBuilder{
		run: sarifRun{
			Tool:    sarifTool{Driver: sarifDriver{Name: "apl", Version: buildVersion(), InformationURI: "https://github.com/apl-lang/apl", Rules: []sarifRule{}}},
			Results: []sarifResult{},
		},
		rules: map[string]int{},
	}
}

// add records the diagnostics of the playbook at path; a diagnostic with
// no range is placed at the path itself.
func (b *sarifBuilder) add(path string, diags hcl.Diagnostics) {
	for _, d := range diags {
		id := ruleSlug(d.Summary)
		i, ok := b.rules[id]
		if !ok {
			i = len(b.run.Tool.Driver.Rules)
			b.rules[id] = i
			b.run.Tool.Driver.Rules = append(b.run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{d.Summary}})
		}
		level := "warning"
		if d.Severity == hcl.DiagError {
			level = "error"
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(path)}}}
		if r := d.Subject; r != nil {
			loc.PhysicalLocation.ArtifactLocation.URI = sarifURI(r.Filename)
			end := r.End
			if end.Line == r.Start.Line && end.Column <= r.Start.Column {
				end.Column = r.Start.Column + 1
			}
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: r.Start.Line, StartColumn: r.Start.Column, EndLine: end.Line, EndColumn: end.Column}
		}
		b.run.Results = append(b.run.Results, sarifResult{RuleID: id, RuleIndex: i, Level: level, Message: sarifMessage{msg}, Locations: []sarifLocation{loc}})
	}
}

func (b *sarifBuilder) log() sarifLog {
	return sarifLog{Version: sarifVersion, Schema: sarifSchema, Runs: []sarifRun{b.run}}
}

// ruleSlug is a diagnostic summary as a rule id: "Unused input" →
// "unused-input".
func ruleSlug(summary string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(summary) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "diagnostic"
	}
	return b.String()
}

// sarifURI is a file name as a SARIF artifact URI: a relative path with
// forward slashes, as code scanning resolves it against the repository,
// or a file URI for an absolute path.
func sarifURI(name string) string {
	if filepath.IsAbs(name) {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(name)}).String()
	}
	p := strings.TrimPrefix(filepath.ToSlash(name), "./")
	return (&url.URL{Path: p}).String()
}
