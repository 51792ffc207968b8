package lang

import "testing"

func TestFormatKeepsTemplateDirectivePadding(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"directive padding kept", "a = \"%{~ if x }y%{~ endif }\"\n", "a = \"%{~ if x }y%{~ endif }\"\n"},
		{"no padding kept", "a = \"%{if x}y%{endif}\"\n", "a = \"%{if x}y%{endif}\"\n"},
		{"interpolation padding kept, expression formatted", "a = \"${ b+1 }\"\n", "a = \"${ b + 1 }\"\n"},
		{"heredoc", "a = <<-EOT\n  %{~ for f in x }\n  - ${f}\n  %{~ endfor }\nEOT\n", "a = <<-EOT\n  %{~ for f in x }\n  - ${f}\n  %{~ endfor }\nEOT\n"},
		{"heredoc with a multi-line interpolation, then more blocks",
			"s {\n  a = <<-EOT\n    x ${join(\",\", [\n      \"a\",\n    ])}\n    done\n  EOT\n  b   = 1\n}\n\nt {\n  c = 2\n}\n",
			"s {\n  a = <<-EOT\n    x ${join(\",\", [\n      \"a\",\n    ])}\n    done\n  EOT\n  b = 1\n}\n\nt {\n  c = 2\n}\n"},
		{"other layout formatted", "a   =  \"%{ if x }y%{ endif }\"\n", "a = \"%{ if x }y%{ endif }\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := Format([]byte(tc.in), "x.hcl")
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if string(got) != tc.want {
				t.Errorf("Format(%q) = %q, want %q", tc.in, got, tc.want)
			}
			again, _ := Format(got, "x.hcl")
			if string(again) != string(got) {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}
