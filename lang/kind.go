package lang

// Kind names the kind of a value an expr-lang expression yields, as
// messages show it to a playbook's author: "a list", not "[]interface {}".
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case int, int64, float64:
		return "a number"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}
