package main

import (
	"path/filepath"
	"strings"
)

// allowPathEnv names directories outside the project that playbooks may
// read, separated as in PATH; --allow-path adds more.
const allowPathEnv = "APL_ALLOW_PATH"

// allowFlag is apl's --allow-path, accepted by every command: every
// command that loads a playbook reads only inside the playbook's project
// (lang.Project) unless the user allows another directory.
type allowFlag struct {
	AllowPath []string `name:"allow-path" placeholder:"DIR" sep:"none" help:"Let playbooks read files in DIR although it is outside their project (the git repository they are in); repeatable. APL_ALLOW_PATH adds directories separated by ':'."`
}

// allowed are the directories the command line and the environment allow.
func (f allowFlag) allowed(getenv func(string) string) []string {
	var out []string
	for _, d := range append(filepath.SplitList(getenv(allowPathEnv)), f.AllowPath...) {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// scanAllowFlag reads --allow-path from args before kong parses them:
// apl run loads its playbook first, to make its inputs into flags.
func scanAllowFlag(args []string) allowFlag {
	var f allowFlag
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return f
		case a == "--allow-path" && i+1 < len(args):
			f.AllowPath = append(f.AllowPath, args[i+1])
			i++
		case strings.HasPrefix(a, "--allow-path="):
			f.AllowPath = append(f.AllowPath, strings.TrimPrefix(a, "--allow-path="))
		}
	}
	return f
}
