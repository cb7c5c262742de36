// Turns every .tf file of one or more directories into JSON with HashiCorp's own HCL parser (@cdktf/hcl2json runs
// it as WASM), and lists the references in every expression, found by the same parser (so `for` variables and
// strings are told apart from references). Prints one JSON document, keyed by the directory as given:
//   {"DIR": {"files": {"main.tf": {...}}, "references": [{"file", "path", "ref"}], "errors": [{"file", "message"}]}}
// Parse errors are reported in "errors", not thrown: the Java side turns them into findings that name the file.
// Several directories in one run share the parser's start-up and a cache of identical files and expressions, which
// is what keeps the broken-copy tests fast.
'use strict';

const fs = require('fs');
const path = require('path');
const { parse, getReferencesInExpression } = require('@cdktf/hcl2json');

const parsed = new Map(); // file name + content -> parsed JSON (or an Error)
const referenced = new Map(); // expression -> reference values

async function parseCached(name, text) {
  const key = name + '\u0000' + text;
  if (!parsed.has(key)) {
    try {
      parsed.set(key, await parse(name, text));
    } catch (e) {
      parsed.set(key, new Error(String(e && e.message ? e.message : e).trim()));
    }
  }
  return parsed.get(key);
}

async function referencesIn(file, expression) {
  if (!referenced.has(expression)) {
    // The library re-quotes a one-line template without escaping the quotes of its literal text, so a filter such
    // as `${local.x} AND labels."function":*` would not parse; a multi-line one goes into a heredoc, where quotes
    // are literal. A trailing newline changes no reference.
    const asTemplate = expression.includes('"') && !expression.includes('\n') ? expression + '\n' : expression;
    referenced.set(expression, (await getReferencesInExpression(file, asTemplate)).map((r) => r.value));
  }
  return referenced.get(expression);
}

async function collectReferences(file, value, at, out) {
  if (typeof value === 'string') {
    if (value.includes('${') || value.includes('%{')) {
      for (const ref of await referencesIn(file, value)) {
        out.push({ file, path: at, ref });
      }
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      await collectReferences(file, value[i], at.concat([String(i)]), out);
    }
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      await collectReferences(file, key, at, out);
      await collectReferences(file, child, at.concat([key]), out);
    }
  }
}

async function parseDirectory(dir) {
  const result = { files: {}, references: [], errors: [] };
  const names = fs.readdirSync(dir).filter((n) => n.endsWith('.tf')).sort();
  for (const name of names) {
    const json = await parseCached(name, fs.readFileSync(path.join(dir, name), 'utf8'));
    if (json instanceof Error) {
      result.errors.push({ file: name, message: json.message });
      continue;
    }
    result.files[name] = json;
    await collectReferences(name, json, [], result.references);
  }
  return result;
}

async function main() {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0) {
    throw new Error('usage: node hcl2json.js TERRAFORM_DIR...');
  }
  const out = {};
  for (const dir of dirs) {
    out[dir] = await parseDirectory(dir);
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(`hcl2json: ${e && e.stack ? e.stack : e}\n`);
  process.exit(2);
});
