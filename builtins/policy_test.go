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
		// Issue 9: what substring matching missed or wrongly refused.
		{"rm -rf ~/*", true},
		{"rm -rf $HOME", true},
		{`rm -rf "$HOME"`, true},
		{"rm -rf ${HOME}/", true},
		{"rm -rf $HOME/*", true},
		{"rm -fr build /", true},
		{"rm -rf ~/project/build", false},
		{"rm -rf \"$HOME/.cache/x\"", false},
		{"find / -delete", true},
		{"find ~ -name '*.tmp' -delete", true},
		{"find . -name '*.tmp' -delete", false},
		{"find / -name x", false},
		{"git reset \\\n--hard", true},
		{"git reset \\\n  --hard HEAD", true},
		{"echo 'never run git reset --hard'", false},
		{`echo "git reset --hard is forbidden"`, false},
		{"# git reset --hard\necho ok", false},
		{"cat <<EOF\ngit reset --hard\nEOF", false},
		{`git "reset" --ha'rd'`, true},
		{`git re\set --hard`, true},
		{"/usr/bin/git reset --hard", true},
		{"FOO=1 git reset --hard", true},
		{"(git reset --hard)", true},
		{"x=$(git reset --hard)", true},
		{"echo \"$(git reset --hard)\"", true},
		{"ls | git reset --hard", true},
		{"if true; then git reset --hard; fi", true},
		{"f() { git reset --hard; }", true},
		{"time git reset --hard", true},
		{"nohup git reset --hard &", true},
		{"timeout 5 git reset --hard", true},
		{"env FOO=1 git reset --hard", true},
		{"command git reset --hard", true},
		{"sudo -u bob ls", true},
		{"echo x | sudo tee /etc/x", true},
		{`bash -c "git reset --hard"`, true},
		{`sh -ec 'rm -rf ~'`, true},
		{`bash -o pipefail -c 'git reset --hard'`, true},
		{`eval "git reset --hard"`, true},
		{`bash -c 'bash -c "git reset --hard"'`, true},
		{`bash -c "echo git reset --hard"`, false},
		{`bash script.sh -c 'git reset --hard'`, false},
		{"echo \"unterminated", true},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			err := DefaultPolicy.Check(tt.command)
			var pe *PolicyError
			if got := errors.As(err, &pe); got != tt.refused {
				t.Fatalf("Check(%q) = %v, want refused=%v", tt.command, err, tt.refused)
			}
			if pe != nil && pe.Rule != "parse" && (pe.Rule == "" || !strings.Contains(tt.command, strings.Fields(pe.Match)[0])) {
				t.Errorf("PolicyError %+v does not name its rule and the matched text", pe)
			}
		})
	}
}

func TestPolicyUnparsable(t *testing.T) {
	t.Parallel()
	err := DefaultPolicy.Check("echo 'open")
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != "parse" || !strings.Contains(err.Error(), "does not parse as bash") {
		t.Errorf("Check of an unparsable script = %v, want a parse refusal", err)
	}
	if err := (Policy{}).Check("echo 'open"); err != nil {
		t.Errorf("the zero Policy parsed the script: %v", err)
	}
}

func TestPolicyCheckArgv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		argv    []string
		refused bool
	}{
		{[]string{"git", "reset", "--hard"}, true},
		{[]string{"echo", "git reset --hard"}, false},
		{[]string{"bash", "-c", "git reset --hard"}, true},
		{[]string{"/usr/bin/sudo", "ls"}, true},
		{[]string{"env", "A=1", "rm", "-rf", "/"}, true},
		{[]string{"printf", "%s", "$(rm -rf ~)"}, false},
		{[]string{"bash", ""}, false},
	}
	for _, tt := range tests {
		err := DefaultPolicy.CheckArgv(tt.argv)
		var pe *PolicyError
		if got := errors.As(err, &pe); got != tt.refused {
			t.Errorf("CheckArgv(%q) = %v, want refused=%v", tt.argv, err, tt.refused)
		}
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

// FuzzPolicyCheck checks that no script makes the policy panic.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{"git reset --hard", "bash -c 'eval \"sudo x\"'", "echo $(( 1 +", "cat <<EOF\nx\nEOF", "${a[$(b)]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		DefaultPolicy.Check(s)
	})
}
