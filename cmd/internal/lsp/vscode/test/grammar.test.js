// Tokenizes sample playbook lines with the extension's grammars, as VS
// Code does (vscode-textmate over Oniguruma), and checks the scopes that
// matter: block types and labels, traversals, functions, and the expr
// condition inside a when string, which the injected grammar colours as
// an embedded language. Run: npm test (after npm install).
"use strict";
const fs = require("fs");
const path = require("path");
const assert = require("assert");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const syntaxes = path.join(__dirname, "..", "syntaxes");
const files = {
  "source.apl": "apl.tmLanguage.json",
  "source.apl-expr": "expr.tmLanguage.json",
  "source.apl.condition-injection": "condition.injection.tmLanguage.json",
};

async function main() {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const f = files[scope];
      if (!f) return null;
      const p = path.join(syntaxes, f);
      return vsctm.parseRawGrammar(fs.readFileSync(p, "utf8"), p);
    },
    getInjections: (scope) => (scope === "source.apl" ? ["source.apl.condition-injection"] : []),
  });
  const grammar = await registry.loadGrammar("source.apl");
  const text = fs.readFileSync(path.join(__dirname, "sample.hcl"), "utf8").split("\n");
  let stack = vsctm.INITIAL;
  const tokens = []; // [line, text, scopes]
  text.forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) tokens.push([i, line.slice(t.startIndex, t.endIndex), t.scopes.join(" ")]);
    stack = r.ruleStack;
  });
  const scopeOf = (line, word) => {
    const t = tokens.find(([l, s]) => l === line && s.includes(word));
    assert.ok(t, `no token ${JSON.stringify(word)} on line ${line + 1}: ${JSON.stringify(tokens.filter(([l]) => l === line))}`);
    return t[2];
  };
  const expect = (line, word, scope) => {
    const got = scopeOf(line, word);
    assert.ok(got.includes(scope), `line ${line + 1}, ${JSON.stringify(word)}: scopes ${got}, want ${scope}`);
  };
  const not = (line, word, scope) => {
    const got = scopeOf(line, word);
    assert.ok(!got.includes(scope), `line ${line + 1}, ${JSON.stringify(word)}: scopes ${got}, want no ${scope}`);
  };
  expect(0, "step", "storage.type.block.apl");
  expect(0, '"plan"', "entity.name.label.apl");
  expect(1, "returns", "variable.other.property.apl");
  expect(3, "file", "entity.name.function.apl");
  // The condition: an embedded expr, its parts coloured as expr's.
  expect(5, "steps", "meta.embedded.expr.apl");
  expect(5, "steps", "variable.language.apl-expr");
  expect(5, "len", "entity.name.function.apl-expr");
  expect(5, "&&", "keyword.operator.apl-expr");
  expect(5, '\\"bug\\"', "string.quoted.double.apl-expr");
  // A description is a plain string: no expr in it.
  expect(6, "steps", "string.quoted.double.apl");
  not(6, "steps", "meta.embedded.expr.apl");
  expect(7, "# a comment", "comment.line.number-sign.apl");
  // A heredoc's interpolation is an expression; its text is a string.
  expect(9, "Fix", "string.unquoted.heredoc.apl");
  expect(9, "steps", "variable.language.apl");
  if (process.env.APL_GRAMMAR_DUMP) for (const t of tokens) console.log(JSON.stringify(t));
  console.log(`ok: ${tokens.length} tokens on ${text.length} lines`);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
