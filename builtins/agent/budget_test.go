package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// numbered returns n lines "line 1" … "line n".
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d", i+1)
	}
	return out
}

func TestEnforceBudget(t *testing.T) {
	long := strings.Join(numbered(20), "\n")
	tests := []struct {
		name    string
		text    string
		budget  Budget
		want    Budgeted
		wantErr string
	}{
		{
			name:   "within budget is kept whole",
			text:   "a\nb\nc\n",
			budget: Budget{MaxResponseLines: 3, MaxSummaryLines: 1, Enforcement: EnforceJSON},
			want:   Budgeted{Text: "a\nb\nc\n", Lines: 3},
		},
		{
			name:   "no limit",
			text:   long,
			budget: Budget{MaxSummaryLines: 1, Enforcement: EnforceSummary},
			want:   Budgeted{Text: long, Lines: 20},
		},
		{
			name:   "json keeps only the JSON block",
			text:   long + "\n```json\n{\n  \"verdict\": \"PASS\",\n  \"score\": 8.5\n}\n```\n",
			budget: Budget{MaxResponseLines: 15, MaxSummaryLines: 2, Enforcement: EnforceJSON},
			want:   Budgeted{Text: "{\n  \"verdict\": \"PASS\",\n  \"score\": 8.5\n}", Cut: true, Lines: 26},
		},
		{
			name:    "json without a JSON block is an error",
			text:    long,
			budget:  Budget{MaxResponseLines: 15, MaxSummaryLines: 5, Enforcement: EnforceJSON},
			want:    Budgeted{Lines: 20},
			wantErr: "response has 20 lines, exceeded max_response_lines=15 with no JSON block",
		},
		{
			name:    "json truncated is an error",
			text:    long + "\n{\"verdict\": \"PA",
			budget:  Budget{MaxResponseLines: 15, MaxSummaryLines: 5, Enforcement: EnforceJSON},
			want:    Budgeted{Lines: 21},
			wantErr: "truncated",
		},
		{
			name:   "summary section under a markdown heading, capped",
			text:   long + "\n## Summary\n\ns1\ns2\ns3\n\n## Details\nd1\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 2, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "s1\ns2", Cut: true, Lines: 28},
		},
		{
			name:   "summary section keeps its subheadings",
			text:   long + "\n## Summary\ns1\n### Risks\nr1\n# Appendix\na1",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 10, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "s1\n### Risks\nr1", Cut: true, Lines: 26},
		},
		{
			name:   "bare SUMMARY label runs to the end",
			text:   "SUMMARY\n" + long,
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 3, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "line 1\nline 2\nline 3", Cut: true, Lines: 21},
		},
		{
			name:   "SUMMARY: label holds its first line",
			text:   long + "\nSUMMARY: all green\nmore\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 5, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "all green\nmore", Cut: true, Lines: 22},
		},
		{
			name:   "the last summary heading wins",
			text:   "## Summary\nold\n" + long + "\n**Summary**\nnew\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 5, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "new", Cut: true, Lines: 24},
		},
		{
			name:   "prose starting with summary is not a heading",
			text:   long + "\nSummary of the work is below\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 2, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "line 20\nSummary of the work is below", Cut: true, Lines: 21},
		},
		{
			name:   "no summary heading keeps the last lines",
			text:   long + "\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 3, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "line 18\nline 19\nline 20", Cut: true, Lines: 20},
		},
		{
			name:   "an empty summary section keeps the last lines",
			text:   long + "\n## Summary\n\n",
			budget: Budget{MaxResponseLines: 10, MaxSummaryLines: 2, Enforcement: EnforceSummary},
			want:   Budgeted{Text: "line 20\n## Summary", Cut: true, Lines: 22},
		},
		{
			name:    "unknown enforcement",
			text:    long,
			budget:  Budget{MaxResponseLines: 10, Enforcement: "everything"},
			want:    Budgeted{Lines: 20},
			wantErr: `unknown budget enforcement "everything"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EnforceBudget(tt.text, tt.budget)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tt.want {
				t.Errorf("EnforceBudget() = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestEnforceBudgetTruncatedWrapsErr(t *testing.T) {
	_, err := EnforceBudget(strings.Join(numbered(5), "\n")+"\n{\"a\": [", Budget{MaxResponseLines: 2, Enforcement: EnforceJSON})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error = %v, want one wrapping ErrTruncated", err)
	}
}
