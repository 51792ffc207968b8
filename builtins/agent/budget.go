package agent

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Enforcement values of a Budget: what survives when a response is cut.
const (
	// EnforceJSON keeps only the JSON block ("JSON return only").
	EnforceJSON = "json"
	// EnforceSummary keeps only the summary ("Read SUMMARY only").
	EnforceSummary = "summary"
)

// Budget is one row of a playbook's context budget table.
type Budget struct {
	// MaxResponseLines is the longest response kept whole; zero means no limit.
	MaxResponseLines int
	// MaxSummaryLines caps what is kept of a response that was cut to its
	// summary; zero means the summary section is not capped.
	MaxSummaryLines int
	// Enforcement is EnforceJSON or EnforceSummary.
	Enforcement string
}

// Budgeted is a response after its budget was enforced.
type Budgeted struct {
	// Text is what the interpreter may read of the response.
	Text string
	// Cut reports whether Text is less than the whole response.
	Cut bool
	// Lines is the line count of the whole response.
	Lines int
}

// EnforceBudget applies the phase runner's context budget rule to an
// agent's response text (spec/protocols.md#phase-runner). The rule is:
//
//	"Every step agent has a declared line budget. The phase-runner reads ONLY
//	the JSON/SUMMARY from each agent's response. If an agent's response
//	exceeds its budget, the phase-runner truncates to the JSON/SUMMARY
//	section only."
//
//	"Budget enforcement rule: The phase-runner ingests at most
//	max_summary_lines from each agent. If the agent's full response exceeds
//	max_response_lines, the phase-runner reads only the last
//	max_summary_lines lines or the JSON block, whichever applies."
//
// apl reads it this way. A response of at most MaxResponseLines lines (or
// any response when MaxResponseLines is zero) is kept whole. A longer one is
// cut according to Enforcement:
//
//   - EnforceJSON ("JSON return only") keeps only the JSON block, as
//     ExtractJSON finds it, however many lines it spans: the JSON is the
//     step's return and cutting it would corrupt it. No JSON block is an
//     error naming max_response_lines; truncated JSON is an error wrapping
//     ErrTruncated.
//   - EnforceSummary ("Read SUMMARY only") keeps the section under the last
//     summary heading ("SUMMARY", "SUMMARY:", "## Summary", "**Summary**"),
//     up to the next heading, capped to its first MaxSummaryLines lines;
//     without such a heading, the last MaxSummaryLines lines.
//
// The whole text is the caller's to keep as an artifact; EnforceBudget only
// decides what the interpreter reads.
func EnforceBudget(text string, b Budget) (Budgeted, error) {
	lines := splitLines(text)
	n := len(lines)
	if b.MaxResponseLines <= 0 || n <= b.MaxResponseLines {
		return Budgeted{Text: text, Lines: n}, nil
	}
	switch b.Enforcement {
	case EnforceJSON:
		raw, err := ExtractJSON(text)
		switch {
		case errors.Is(err, ErrNoJSON):
			return Budgeted{Lines: n}, &BudgetError{fmt.Errorf("response has %d lines, exceeded max_response_lines=%d with no JSON block", n, b.MaxResponseLines)}
		case err != nil:
			return Budgeted{Lines: n}, &BudgetError{fmt.Errorf("response has %d lines, exceeded max_response_lines=%d: %w", n, b.MaxResponseLines, err)}
		}
		return Budgeted{Text: string(raw), Cut: true, Lines: n}, nil
	case EnforceSummary:
		kept := summarySection(lines)
		if kept == nil {
			kept = lastLines(lines, b.MaxSummaryLines)
		} else if b.MaxSummaryLines > 0 && len(kept) > b.MaxSummaryLines {
			kept = kept[:b.MaxSummaryLines]
		}
		return Budgeted{Text: strings.Join(kept, "\n"), Cut: true, Lines: n}, nil
	default:
		return Budgeted{Lines: n}, fmt.Errorf("unknown budget enforcement %q (want %q or %q)", b.Enforcement, EnforceJSON, EnforceSummary)
	}
}

// splitLines splits text into lines; a final newline does not start another
// line and an empty text has none.
func splitLines(text string) []string {
	text = strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// lastLines returns the last n lines, trailing blank lines aside; n <= 0
// keeps them all.
func lastLines(lines []string, n int) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if n <= 0 || len(lines) <= n {
		return lines
	}
	return lines[len(lines)-n:]
}

var (
	// summaryHeading matches the lines that open a summary section: a
	// markdown heading, a bold line or a bare SUMMARY label, with text
	// allowed after a colon.
	summaryHeading = regexp.MustCompile(`(?i)^\s*(#{1,6}\s*)?(\*\*|__)?summary(\*\*|__)?\s*(:)?(\*\*|__)?\s*(.*)$`)
	// markdownHeading matches any markdown heading, which ends a section.
	markdownHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s`)
)

// summarySection returns the non-blank-trimmed lines under the last summary
// heading, or nil when there is none. A markdown summary heading ends at the
// next heading of the same or a higher level; a bare or bold label ends at
// the next markdown heading.
func summarySection(lines []string) []string {
	at, level := -1, 0
	var first string
	for i, l := range lines {
		m := summaryHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		heading, colon, rest := strings.TrimSpace(m[1]), m[4] != "", m[6]
		switch {
		case heading != "":
			// "## Summary" or "## Summary of changes": the rest names it.
			at, first, level = i, "", len(heading)
		case rest == "":
			at, first, level = i, "", 7 // a label: ends at any heading
		case colon:
			// "SUMMARY: all tests pass" holds its first line.
			at, first, level = i, strings.TrimSpace(rest), 7
		}
	}
	if at < 0 {
		return nil
	}
	var out []string
	if first != "" {
		out = append(out, first)
	}
	for _, l := range lines[at+1:] {
		if m := markdownHeading.FindStringSubmatch(l); m != nil && len(m[1]) <= level {
			break
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[0]) == "" {
		out = out[1:]
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return nil // an empty section: fall back to the last lines
	}
	return out
}
