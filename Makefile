# apl — see README.md. Every target works on a clean machine with only Go.

GO      ?= go
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build test race lint fuzz bench update graphs screenshot run clean conformance record-examples vscode

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/apl ./cmd/apl

test: lint
	@# 30 minutes a package, not go test's 10: on a clean machine cmd/apl's
	@# Temporal scripts first build Temporal's server (cached after that).
	$(GO) test -count=1 -timeout 30m $(PKGS)
	@# Every benchmark runs once, so a fixture that stops loading fails here
	@# (the Temporal for_each benchmark over 50 items instead of 1,000).
	APL_BENCH_ITEMS=50 $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x $(PKGS)

# The race detector over every test (issue 9: the walk's coroutines, the
# for_each scheduler and the drivers' goroutines must stay race-free).
race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@# The build without Temporal (a faster start for validate in CI) must compile too.
	$(GO) vet -tags notemporal ./cmd/apl

# The agent drivers against the real claude, codex and gemini CLIs (pinned
# versions, installed with npm into the user cache directory, or
# $APL_CONFORMANCE_CACHE) and a fake model server on 127.0.0.1. Without npm
# or its registry it prints a SKIP line for the CLI drivers and passes.
conformance:
	@# -v, because go test shows a passing package's output (the SKIP line) only then.
	APL_CONFORMANCE=1 $(GO) test -v -count=1 -timeout 15m ./builtins/agent/conformance/

# apl lsp in a real VS Code: the extension in cmd/internal/lsp/vscode, built
# with npm ci and vsce and tested with npm test, installed into code-server
# (VS Code's workbench and extension host, served to a browser) and used
# from headless Chromium: a diagnostic, a hover, a quick fix, go to
# definition, and the message when apl.path is wrong. Node.js 24 and
# code-server are installed with npm at pinned versions into the user cache
# directory (or $APL_VSCODE_CACHE); code-server's native modules need g++,
# make, python3 and the headers of libkrb5, libsecret, libX11 and libxkbfile
# (.ci/run installs them). Without npm or its registry it prints a SKIP line
# and passes. `make vscode VSCODEFLAGS=-update` writes the README's
# screenshot of a hover (cmd/internal/lsp/vscode/hover.png).
vscode:
	@# -v, because go test shows a passing package's output (the SKIP line) only then.
	APL_VSCODE=1 $(GO) test -v -count=1 -timeout 40m -run '^TestVSCode$$' ./cmd/internal/lsp $(VSCODEFLAGS)

# Record the cassettes of examples/claude-code (the pinned claude CLI, as
# conformance installs it) and examples/local-openai (apl's openai driver),
# both against the fake model server; the second needs 127.0.0.1:11434
# free. Review the diff and the versions the READMEs state.
record-examples:
	APL_RECORD_EXAMPLES=1 $(GO) test -v -count=1 -timeout 15m -run 'TestRecordExamples' ./builtins/agent/conformance/

# Every fuzz target of the module (the loader, the gate compiler, the
# byte prefilter against the token scan, the script lexer, the JSON
# extraction, apl lsp's document changes (FuzzDidChange), ...), found by
# name, one after the other for FUZZTIME each.
# A change to a parser, the prefilter or the script lexer runs this first.
FUZZTIME ?= 1m
fuzz:
	@grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sort | \
	while IFS=: read -r file fn; do \
		name=$${fn#func }; dir=$$(dirname "$$file"); \
		echo "$(GO) test $$dir -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME)"; \
		$(GO) test "$$dir" -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Rewrite golden files after an intended change.
update:
	$(GO) test ./lang ./cmd/apl ./stdlib -update

# Draw the README's pictures again (spec/*.svg); needs Graphviz's dot.
graphs:
	$(GO) test ./cmd/apl -run 'TestGraphPictures' -update

# Draw the README's screenshot of apl ui again (cmd/internal/ui/screenshot.png)
# from a real run of stdlib:conductor in a scratch git project, its agents
# the stdlib tests' stand-in (built here), in Chromium. Needs chromium,
# Graphviz and git. Look at the picture before committing it.
screenshot:
	$(GO) test -c -o bin/standin ./stdlib
	APL_UI_SCREENSHOT=$(CURDIR)/bin/standin $(GO) test -count=1 -run 'TestUIScreenshot' -v ./cmd/apl

# Run the phase-gates example (stdlib:phase-runner) offline, with the
# example agent, in a scratch git project.
run: build
	APL=./bin/apl examples/phase-gates/try.sh pass

clean:
	rm -rf bin .apl
