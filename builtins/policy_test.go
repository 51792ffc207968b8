package builtins

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		refused bool
	}{
		{"git reset --hard", true},
		{"git reset --hard HEAD~3", true},
		{"git  -C sub reset -q   --hard origin/main", true},
		{"cd x && git reset --hard", true},
		{"git reset HEAD file.go", false},
		{"git reset --soft HEAD~1", false},
		{"git reset HEAD; echo --hard", false},
		{"git revert --no-commit abc..HEAD", false},
		{"npm install -g typescript", true},
		{"npm i -g typescript", true},
		{"npm install --global typescript", true},
		{"npm -g install typescript", true},
		{"npm install --location=global x", true},
		{"pnpm add -g x", true},
		{"yarn global add x", true},
		{"npm install", false},
		{"npm install --save-dev typescript", false},
		{"npm ls -g", false},
		{"npm run build -- --grep x", false},
		{"sudo apt-get install x", true},
		{"echo hi && sudo rm x", true},
		{"pseudo-tool run", false},
		{"rm -rf /", true},
		{"rm -rf / ", true},
		{"rm -rf /*", true},
		{"rm -r -f ~", true},
		{"rm -rf ~/", true},
		{"rm -rf $HOME", true},
		{"rm -rf /tmp/build", false},
		{"rm -rf ./dist", false},
		{"rm -rf build/ && ls", false},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			err := DefaultPolicy.Check(tt.command)
			var pe *PolicyError
			if got := errors.As(err, &pe); got != tt.refused {
				t.Fatalf("Check(%q) = %v, want refused=%v", tt.command, err, tt.refused)
			}
			if pe != nil && (pe.Rule == "" || !strings.Contains(tt.command, strings.Fields(pe.Match)[0])) {
				t.Errorf("PolicyError %+v does not name its rule and the matched text", pe)
			}
		})
	}
}

func TestPolicyInvalidRule(t *testing.T) {
	t.Parallel()
	err := Policy{Blocklist: []string{"("}}.Check("anything")
	var pe *PolicyError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "invalid blocklist rule") {
		t.Errorf("Check with a broken rule = %v, want a plain error naming the rule", err)
	}
}

func TestZeroPolicyAllowsEverything(t *testing.T) {
	t.Parallel()
	if err := (Policy{}).Check("git reset --hard"); err != nil {
		t.Errorf("zero Policy refused: %v", err)
	}
}
