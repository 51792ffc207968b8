package builtins

import "strings"

// ShellQuote returns s as one bash word that means exactly s. The
// interpreter runs every value it splices into a `script` through it, so an
// input such as `$(touch x)` or `a'b; rm -rf ~` reaches the command as a
// literal argument instead of being executed.
//
// Words made only of characters no shell treats specially are returned as
// they are, to keep traces readable; everything else is wrapped in single
// quotes, inside which bash interprets nothing, and each embedded single
// quote is closed, escaped and reopened:
//
//	a'b  →  'a'\''b'
//
// "=" and "%" count as special, and bash's reserved words are quoted, so a
// value that lands in command position can never turn into an assignment,
// a job reference or syntax.
//
// A NUL byte cannot be passed through argv or a bash script at all; it is
// kept in the result and bash will drop or truncate at it.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if isShellSafe(s) && !bashReserved[s] {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellSafe reports whether every byte of s is one that bash never
// expands, splits on or treats as syntax in any position of a word.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_-./,:@+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// bashReserved holds the words bash reads as syntax when unquoted in
// command position.
var bashReserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"case": true, "esac": true, "for": true, "select": true, "while": true,
	"until": true, "do": true, "done": true, "in": true, "function": true,
	"time": true, "coproc": true,
}
