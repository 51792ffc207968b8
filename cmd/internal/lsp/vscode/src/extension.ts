// The apl extension starts `apl lsp` for playbook files and hands the
// editor to it: diagnostics as you type, hover, go to definition, find
// references, completion, formatting, symbols and quick fixes. The
// colours are the grammars' (syntaxes/), which need no server.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("apl");
  const command = config.get<string>("path", "apl");
  const args = [...config.get<string[]>("args", []), "lsp"];
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = {
    // Playbook and test files; prompt files are checked with the
    // playbook that reads them when they are open too.
    documentSelector: [
      { scheme: "file", language: "apl" },
      { scheme: "file", pattern: "**/prompts/*.md" },
    ],
  };
  client = new LanguageClient("apl", "apl lsp", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("apl.restartServer", async () => {
      await client?.restart();
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
