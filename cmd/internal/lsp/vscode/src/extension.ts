// The apl extension starts `apl lsp` for playbook files and hands the
// editor to it: diagnostics as you type, hover, go to definition, find
// references, completion, formatting, symbols and quick fixes. The
// colours are the grammars' (syntaxes/), which need no server.
//
// It claims a .hcl file (gives it the language apl) only when the file is
// a playbook: its text declares a playbook, a step or a test
// (declaresPlaybook), or it matches a glob of the apl.playbooks setting.
// Other HCL files (Terraform, Packer, Nomad) are left to their own
// extensions, and apl lsp starts only once a playbook is open.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { declaresPlaybook } from "./detect";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = () => vscode.workspace.getConfiguration("apl");
  const isPlaybook = (doc: vscode.TextDocument): boolean => {
    if (doc.languageId === "apl") {
      return true;
    }
    if (doc.uri.scheme !== "file" || !doc.fileName.endsWith(".hcl")) {
      return false;
    }
    for (const pattern of config().get<string[]>("playbooks", [])) {
      if (vscode.languages.match({ scheme: "file", pattern }, doc) > 0) {
        return true;
      }
    }
    return declaresPlaybook(doc.getText());
  };
  const start = async (): Promise<void> => {
    if (client) {
      return;
    }
    const command = config().get<string>("path", "apl");
    const args = [...config().get<string[]>("args", []), "lsp"];
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
    try {
      await client.start();
    } catch (err) {
      // Most often apl is not where apl.path says: the editor's PATH is
      // its login shell's, which may not have the directory apl is in.
      client = undefined;
      const why = err instanceof Error ? err.message : String(err);
      // Not awaited: the message stays until it is closed, and a change
      // of the setting meanwhile must start the server.
      void vscode.window
        .showErrorMessage(
          `apl lsp did not start: ${why}. Set apl.path to the apl binary (now "${command}"); the server restarts when it changes.`,
          "Open Settings",
        )
        .then((choice) => {
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "apl.path");
          }
        });
    }
  };
  const restart = async (): Promise<void> => {
    const old = client;
    client = undefined;
    await old?.stop();
    if (vscode.workspace.textDocuments.some(isPlaybook)) {
      await start();
    }
  };
  const claim = async (doc: vscode.TextDocument): Promise<void> => {
    if (!isPlaybook(doc)) {
      return;
    }
    if (doc.languageId !== "apl") {
      await vscode.languages.setTextDocumentLanguage(doc, "apl");
    }
    await start();
  };
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(claim),
    vscode.commands.registerCommand("apl.restartServer", restart),
    // A new binary or new flags take effect at once.
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("apl.path") || e.affectsConfiguration("apl.args")) {
        await restart();
      }
    }),
  );
  await Promise.all(vscode.workspace.textDocuments.map(claim));
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
