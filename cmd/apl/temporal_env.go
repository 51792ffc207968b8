package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// A run on Temporal gets its worker's environment, not the one apl run
// was started in: SCENARIO=x apl run --engine temporal would run with the
// worker's SCENARIO, or none. apl run sends the variables --env names,
// and warns of those it sees the run read, set here, that it does not
// send.

// sendEnv is what --env sends: NAME takes this environment's value,
// NAME=VALUE its own.
func sendEnv(flags []string) (map[string]string, error) {
	env := map[string]string{}
	for _, f := range flags {
		name, val, given := strings.Cut(f, "=")
		if !envName.MatchString(name) {
			return nil, fmt.Errorf("--env %s: want a variable's NAME, or NAME=VALUE", f)
		}
		if !given {
			var ok bool
			if val, ok = os.LookupEnv(name); !ok {
				return nil, fmt.Errorf("--env %s: %s is not set here; give it a value with --env %s=VALUE", f, name, name)
			}
		}
		env[name] = val
	}
	return env, nil
}

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// envRead finds $NAME and ${NAME} in a script, and a driver's
	// api_key_env.
	envRead = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)|api_key_env\s*=\s*"([A-Za-z_][A-Za-z0-9_]*)"`)
)

// sameEverywhere are variables a worker has of its own, whose value here
// means nothing there, and the shell's own.
var sameEverywhere = map[string]bool{
	"HOME": true, "PATH": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"TERM": true, "LANG": true, "LC_ALL": true, "TMPDIR": true, "HOSTNAME": true, "IFS": true, "RANDOM": true,
	"SHLVL": true, "UID": true, "EUID": true, "PPID": true, "SECONDS": true, "LINENO": true, "TZ": true,
}

// unsentEnv warns of the variables set here that the run reads (in the
// playbook's files, the files of the playbooks it runs, and the files of
// the agent command) and that are not sent.
func unsentEnv(pb *lang.Playbook, agentCmd []string, sent map[string]string) (string, error) {
	files, err := lang.Files(pb)
	if err != nil {
		return "", err
	}
	for _, arg := range agentCmd {
		if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<20 {
			if b, err := os.ReadFile(arg); err == nil {
				files[arg] = b
			}
		}
	}
	readers := map[string][]string{}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		for _, m := range envRead.FindAllSubmatch(files[f], -1) {
			name := string(m[1]) + string(m[2])
			_, set := os.LookupEnv(name)
			_, sending := sent[name]
			if !set || sending || sameEverywhere[name] || strings.HasPrefix(name, "APL_") {
				continue
			}
			if base := filepath.Base(f); !slices.Contains(readers[name], base) {
				readers[name] = append(readers[name], base)
			}
		}
	}
	if len(readers) == 0 {
		return "", nil
	}
	var names, flags, reads []string
	for _, n := range slices.Sorted(maps.Keys(readers)) {
		names = append(names, n)
		flags = append(flags, "--env "+n)
		reads = append(reads, fmt.Sprintf("%s (in %s)", n, strings.Join(readers[n], ", ")))
	}
	verb, value := "is", "value"
	if len(names) > 1 {
		verb, value = "are", "values"
	}
	return fmt.Sprintf("the run reads %s, which %s set here; a run on Temporal gets its worker's environment, not this one: set %s where the workers start, or send the %s set here with %s",
		strings.Join(reads, ", "), verb, strings.Join(names, ", "), value, strings.Join(flags, " ")), nil
}

// setEnvLocal is --env for a local run, which has this environment
// already: NAME=VALUE sets NAME for its commands and agents.
func setEnvLocal(flags []string) error {
	env, err := sendEnv(flags)
	for k, v := range env {
		os.Setenv(k, v)
	}
	return err
}
