package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Artifacts are the files interp writes in a run's artifacts/ folder,
// one per stream of an attempt: STEP-N.EXT, or STEP.ITEM-N.EXT for a step
// inside a for_each (see interp's artifactBase).
type artifact struct {
	Step    string `json:"step"`
	Item    string `json:"item,omitempty"`
	Attempt int    `json:"attempt"`
	// Kind is the stream: prompt, response, stdout or stderr.
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// tailLines is how many lines of a failed step's output are shown.
const tailLines = 20

// kindOrder is the order of an attempt's artifacts: what was asked, then
// what came back.
var kindOrder = []string{"prompt", "response", "stdout", "stderr"}

// outputTail is what progress prints under a failed step: the end of each
// output artifact of its last attempt, indented, and where the whole is.
// The lines shown are shared out among the artifacts, so that a short
// stderr does not halve a long stdout. Prompts are named, not shown: they
// are what the step sent, not what went wrong.
func outputTail(paths []string) []string {
	type file struct {
		path, kind string
		lines      []string
		show       int
	}
	var files []*file
	for _, p := range paths {
		f := &file{path: p, kind: strings.TrimPrefix(filepath.Ext(p), ".")}
		if f.kind != "prompt" {
			if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
				f.lines = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			}
		}
		files = append(files, f)
	}
	slices.SortStableFunc(files, func(a, b *file) int { return kindRank(a.kind) - kindRank(b.kind) })
	bySize := slices.Clone(files)
	slices.SortStableFunc(bySize, func(a, b *file) int { return len(a.lines) - len(b.lines) })
	budget, left := tailLines, 0
	for _, f := range bySize {
		if len(f.lines) > 0 {
			left++
		}
	}
	for _, f := range bySize {
		if len(f.lines) == 0 {
			continue
		}
		f.show = min(len(f.lines), max(budget/left, 3))
		budget -= f.show
		left--
	}
	var out []string
	for _, f := range files {
		head := fmt.Sprintf("    --- %s: %s", f.kind, relPath(f.path))
		switch {
		case f.kind == "prompt":
		case len(f.lines) == 0:
			head += " (empty)"
		case f.show < len(f.lines):
			head += fmt.Sprintf(" (last %d of %d lines)", f.show, len(f.lines))
		}
		out = append(out, head)
		for _, l := range f.lines[len(f.lines)-f.show:] {
			out = append(out, "    "+clip(strings.TrimRight(l, "\r"), 300))
		}
	}
	return out
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

var artifactName = regexp.MustCompile(`^([^.]+)(?:\.(.+))?-(\d+)\.([a-z]+)$`)

// runArtifacts lists a run directory's artifacts in the order steps
// wrote them: by step as order gives them (then by name), item, attempt
// and kind.
func runArtifacts(dir string, order []string) []artifact {
	entries, _ := os.ReadDir(filepath.Join(dir, "artifacts"))
	var out []artifact
	for _, e := range entries {
		m := artifactName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		out = append(out, artifact{Step: m[1], Item: m[2], Attempt: n, Kind: m[4], Path: filepath.Join(dir, "artifacts", e.Name())})
	}
	rank := func(step string) int {
		if i := slices.Index(order, step); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out, func(a, b artifact) int {
		if c := rank(a.Step) - rank(b.Step); c != 0 {
			return c
		}
		if c := strings.Compare(a.Step, b.Step); c != 0 {
			return c
		}
		if c := strings.Compare(a.Item, b.Item); c != 0 {
			return c
		}
		if a.Attempt != b.Attempt {
			return a.Attempt - b.Attempt
		}
		return kindRank(a.Kind) - kindRank(b.Kind)
	})
	return out
}

func kindRank(k string) int {
	if i := slices.Index(kindOrder, k); i >= 0 {
		return i
	}
	return len(kindOrder)
}
