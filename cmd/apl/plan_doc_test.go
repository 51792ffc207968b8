package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// planDoc is where the stdlib playbooks' plans are worked out by hand.
const planDoc = "spec/plan-stdlib.md"

// TestPlanStdlibDoc keeps spec/plan-stdlib.md true: every stdlib playbook
// has its section; every "$ apl plan ..." block shows what the command
// prints (-update rewrites the blocks, and adds a section for a new
// playbook); and every hand computation ("agent calls  2·3 + 4 = 10") adds
// up and agrees with the plan the section's command prints. A playbook
// changed by others fails here until someone checks its figures again.
func TestPlanStdlibDoc(t *testing.T) {
	names := stdlibNames(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	src, err := os.ReadFile(planDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	run := func(cmd string) string {
		var out, errOut strings.Builder
		if code := Main(strings.Fields(cmd), &out, &errOut); code != 0 {
			t.Errorf("apl %s: exit %d\n%s", cmd, code, errOut.String())
		}
		return out.String()
	}
	for _, name := range names {
		if strings.Contains(doc, "\n## stdlib:"+name+"\n") {
			continue
		}
		if !*update {
			t.Errorf("%s has no section for stdlib:%s; go test ./cmd/apl -run TestPlanStdlibDoc -update adds one with its plan, then work its agent calls out by hand", planDoc, name)
			continue
		}
		doc += fmt.Sprintf("\n## stdlib:%s\n\n```text\n$ apl plan stdlib:%s --items 3\n```\n\nNot yet checked by hand.\n", name, name)
	}
	sections := strings.Split(doc, "\n## ")
	for i, sec := range sections {
		blocks := strings.Split(sec, "```text\n")
		var plan string // the output of the section's apl plan
		for j := 1; j < len(blocks); j++ {
			body, rest, _ := strings.Cut(blocks[j], "```")
			cmd, shown, ok := strings.Cut(body, "\n")
			args, isPlan := strings.CutPrefix(cmd, "$ apl ")
			if !ok || !isPlan {
				checkHandSums(t, body, plan)
				continue
			}
			plan = run(args)
			if shown == plan {
				continue
			}
			if *update {
				blocks[j] = cmd + "\n" + plan + "```" + rest
				continue
			}
			t.Errorf("apl %s prints\n%s\nbut %s shows\n%s\nIf the change is right, copy the output into %s (go test ./cmd/apl -run TestPlanStdlibDoc -update) and check the hand computation below it again.", args, plan, planDoc, shown, planDoc)
		}
		sections[i] = strings.Join(blocks, "```text\n")
	}
	if *update {
		if out := strings.Join(sections, "\n## "); out != string(src) {
			if err := os.WriteFile(planDoc, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// handSum is a line of a hand computation: a label, two spaces or more,
// the sum and its total ("one item  2 + 3·4 = 14"). The totals labelled
// "agent calls" and "retries" are the plan's.
var handSum = regexp.MustCompile(`(?m)^([a-z][a-z_ ]*?)  +(.+?) += +([0-9]+)$`)

// checkHandSums checks each hand computation in a text block: its
// arithmetic, and its total against the plan printed above it.
func checkHandSums(t *testing.T, block, plan string) {
	t.Helper()
	for _, m := range handSum.FindAllStringSubmatch(block, -1) {
		figure, expr := m[1], m[2]
		want, _ := strconv.Atoi(m[3])
		got, err := evalSum(expr)
		if err != nil {
			t.Errorf("%s: %q: %v", planDoc, m[0], err)
			continue
		}
		if got != want {
			t.Errorf("%s: %q adds up to %d, not %d", planDoc, m[0], got, want)
		}
		if plan == "" || figure != "agent calls" && figure != "retries" {
			continue
		}
		var shown string
		switch figure {
		case "agent calls":
			shown = planFigure(plan, `(?m)^Path to the most agent calls \(([0-9,]+)\)`)
		case "retries":
			shown = planFigure(plan, `(?m)^retries \(limits.max_retries counts them\): ([0-9,]+)$`)
		}
		if shown != strconv.Itoa(want) {
			t.Errorf("%s: the hand computation %q says %d, but apl plan says %s: work it out again", planDoc, m[0], want, shown)
		}
	}
}

func planFigure(plan, re string) string {
	m := regexp.MustCompile(re).FindStringSubmatch(plan)
	if m == nil {
		return "nothing"
	}
	return strings.ReplaceAll(m[1], ",", "")
}

// evalSum evaluates whole numbers with +, × (or ·) and parentheses, and
// ignores words ("verify 5·2" is 10): the hand computations name what
// they count.
func evalSum(expr string) (int, error) {
	var toks []string
	for _, f := range regexp.MustCompile(`[0-9]+|[+×·()]|[A-Za-z_][A-Za-z_0-9]*`).FindAllString(expr, -1) {
		if f[0] >= '0' && f[0] <= '9' || strings.ContainsAny(f, "+×·()") {
			toks = append(toks, f)
		}
	}
	pos := 0
	var sum, product, factor func() (int, error)
	factor = func() (int, error) {
		if pos >= len(toks) {
			return 0, fmt.Errorf("ends too soon")
		}
		tok := toks[pos]
		pos++
		if tok == "(" {
			v, err := sum()
			if err != nil {
				return 0, err
			}
			if pos >= len(toks) || toks[pos] != ")" {
				return 0, fmt.Errorf("a ( without its )")
			}
			pos++
			return v, nil
		}
		return strconv.Atoi(tok)
	}
	product = func() (int, error) {
		v, err := factor()
		for err == nil && pos < len(toks) && (toks[pos] == "×" || toks[pos] == "·") {
			pos++
			var w int
			w, err = factor()
			v *= w
		}
		return v, err
	}
	sum = func() (int, error) {
		v, err := product()
		for err == nil && pos < len(toks) && toks[pos] == "+" {
			pos++
			var w int
			w, err = product()
			v += w
		}
		return v, err
	}
	v, err := sum()
	if err == nil && pos != len(toks) {
		err = fmt.Errorf("%q left over", strings.Join(toks[pos:], " "))
	}
	return v, err
}

func TestEvalSum(t *testing.T) {
	for expr, want := range map[string]int{
		"2·1 + 5·1 + 5·2":          17,
		"verify 5 × (2 + judge 6)": 40,
		"6 + 3 × (16 + 4) + 16":    82,
		"research 2 + plan 3·2":    8,
	} {
		if got, err := evalSum(expr); err != nil || got != want {
			t.Errorf("evalSum(%q) = %d, %v; want %d", expr, got, err, want)
		}
	}
}
