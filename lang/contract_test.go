package lang

import "testing"

func TestNamesWord(t *testing.T) {
	tests := []struct {
		text, name string
		want       bool
	}{
		{`{"score": 7.5}`, "score", true},
		{"score", "score", true},
		{"alignment_score only", "score", false},
		{"scores and score_band", "score", false},
		{"scores and score_band, then score", "score", true},
		{"", "score", false},
	}
	for _, tt := range tests {
		if got := namesWord(tt.text, tt.name); got != tt.want {
			t.Errorf("namesWord(%q, %q) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}
