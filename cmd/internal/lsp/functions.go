package lsp

import (
	"regexp"
	"strings"
	"sync"

	"github.com/apl-lang/apl/lang"
)

// A function is one row of lang's table of functions.
type function struct {
	name              string
	inValues, inConds bool
	what              string
}

// functions are lang's functions, read once from lang.FunctionTable, the
// table the spec prints: the one list of which language calls what.
var functions = sync.OnceValue(func() []function {
	var out []function
	for _, line := range strings.Split(lang.FunctionTable(), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 4 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		out = append(out, function{
			name:     strings.Trim(cells[0], "| `"),
			inValues: strings.HasPrefix(cells[1], "yes"),
			inConds:  strings.HasPrefix(cells[2], "yes"),
			what:     strings.TrimSuffix(cells[3], " |"),
		})
	}
	return out
})

// conditionAttr matches a line whose string is an expr condition.
var conditionAttr = regexp.MustCompile(`^\s*(when|condition|progress_when|for_each|until)\s*=\s*"`)

// inCondition reports whether offset off of src is inside the string of
// an expr condition written on one line.
func inCondition(src []byte, off int) bool {
	ls := strings.LastIndexByte(string(src[:off]), '\n') + 1
	line := string(src[ls:off])
	m := conditionAttr.FindStringIndex(line)
	if m == nil {
		return false
	}
	return strings.Count(strings.ReplaceAll(line[m[1]:], `\"`, ""), `"`)%2 == 0
}
