// Writes the Google provider 7.x schema the offline checks read (SchemaCheck) for every google_* resource and data
// source type terraform/ declares: their arguments and nested blocks under Terraform's names, which are required,
// and which are output-only. Source: @pulumi/gcp (pinned in package-lock.json), whose typed inputs are generated
// from hashicorp/terraform-provider-google-beta 7.x (package.json names the version), read with the TypeScript
// parser:
//   a resource's arguments   its XArgs interface (a property without `?` is required), nested blocks the
//                            inputs.* types they name;
//   output-only              in XState (every attribute) but not in XArgs; in a nested block, a property whose
//                            documentation starts "(Output" (the provider docs' mark, which Pulumi keeps);
//   a data source            GetXArgs, and GetXResult for its attributes.
// Pulumi names properties in camelCase and pluralises list blocks (lifecycle_rule -> lifecycleRules), so the
// Terraform names come from bridge-metadata.json: an excerpt of pulumi-gcp's own record of each Terraform type's
// Pulumi token and list fields (its source is named in the file).
//
//   npm ci --ignore-scripts && node generate.js            rewrite the schema
//   node generate.js --check                                 fail if the committed schema differs (nothing written)
//   node generate.js --bridge-metadata FILE                  first re-excerpt bridge-metadata.json from pulumi-gcp's
//                                                            full file, for the google_* types terraform/ declares
'use strict';

const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const HERE = __dirname;
const TERRAFORM = path.resolve(HERE, '../..');
const PULUMI = path.join(HERE, 'node_modules/@pulumi/gcp');
const EXCERPT = path.join(HERE, 'bridge-metadata.json');
const SCHEMA = path.resolve(HERE, '../src/main/resources/dev/once/terraform/check/google-7-schema.json');

function main(argv) {
  const check = argv.includes('--check');
  const full = argv.indexOf('--bridge-metadata');
  const pkg = readJson(path.join(HERE, 'package.json'));
  if (full >= 0) {
    output(EXCERPT, excerptOf(readJson(argv[full + 1]), pkg.schemaSource.bridgeMetadata), check);
  }
  output(SCHEMA, generate(pkg), check);
}

/** Writes a JSON file, or with --check fails when the committed one differs. */
function output(file, value, check) {
  const text = JSON.stringify(value, null, 2) + '\n';
  if (!check) {
    fs.writeFileSync(file, text);
  } else if (fs.readFileSync(file, 'utf8') !== text) {
    throw new Error(`${path.relative(TERRAFORM, file)} is not what this run generates: run node generate.js without --check`);
  }
}

function installed() {
  return readJson(path.join(PULUMI, 'package.json'));
}

function generate(pkg) {
  const lock = readJson(path.join(HERE, 'package-lock.json')).packages['node_modules/@pulumi/gcp'];
  if (installed().version !== lock.version) {
    throw new Error(`node_modules holds @pulumi/gcp ${installed().version}, package-lock.json pins ${lock.version}: npm ci`);
  }
  const excerpt = readJson(EXCERPT);
  const declared = declaredTypes();
  for (const kind of ['resource', 'data']) {
    const missing = declared[kind].filter((t) => !excerpt[kind][t]);
    if (missing.length > 0) {
      throw new Error(`bridge-metadata.json lacks ${kind} ${missing.join(', ')}: run with --bridge-metadata FILE, the`
        + ` file ${pkg.schemaSource.bridgeMetadata.path} of ${pkg.schemaSource.bridgeMetadata.repository}`
        + ` at ${pkg.schemaSource.bridgeMetadata.tag}`);
    }
  }
  const inputs = interfaces(parse('types/input.d.ts'));
  const out = {
    source: {
      npm: `@pulumi/gcp@${lock.version}`,
      integrity: lock.integrity,
      provider: pkg.schemaSource.provider,
      bridgeMetadata: excerpt.source,
      generatedBy: 'terraform/check/schema/generate.js',
    },
    resource: {},
    data: {},
  };
  for (const kind of ['resource', 'data']) {
    for (const type of declared[kind]) {
      const entry = excerpt[kind][type];
      out[kind][type] = typeSchema(kind, type, entry, excerpt['fix-label-names'][type] || [], inputs);
    }
  }
  return out;
}

/** The google_* resource and data source types terraform/*.tf declares. */
function declaredTypes() {
  const types = { resource: new Set(), data: new Set() };
  for (const name of fs.readdirSync(TERRAFORM).filter((n) => n.endsWith('.tf'))) {
    const text = fs.readFileSync(path.join(TERRAFORM, name), 'utf8');
    for (const m of text.matchAll(/^\s*(resource|data)\s+"(google_[a-z0-9_]+)"/gm)) {
      types[m[1]].add(m[2]);
    }
  }
  return { resource: [...types.resource].sort(), data: [...types.data].sort() };
}

/** Keeps, of pulumi-gcp's bridge-metadata.json, what naming needs for the google types terraform/ declares. */
function excerptOf(full, source) {
  const declared = declaredTypes();
  const excerpt = { source, resource: {}, data: {}, 'fix-label-names': {} };
  const sections = { resource: 'resources', data: 'datasources' };
  for (const kind of ['resource', 'data']) {
    for (const type of declared[kind]) {
      const entry = full['auto-aliasing'][sections[kind]][type];
      if (!entry) {
        throw new Error(`${kind} ${type} is not a type of this provider version (not in bridge-metadata.json)`);
      }
      excerpt[kind][type] = { current: entry.current, fields: entry.fields || {} };
      const labels = (full['fix-label-names'][kind === 'resource' ? 'resources' : 'dataSources'] || {})[type];
      if (labels) {
        excerpt['fix-label-names'][type] = labels;
      }
    }
  }
  return excerpt;
}

/** The .d.ts a namespace's index.d.ts takes an export from (firestore's Index is in index_.d.ts). */
function moduleFile(namespace, name) {
  const index = fs.readFileSync(path.join(PULUMI, namespace, 'index.d.ts'), 'utf8');
  const m = index.match(new RegExp(`export declare const ${name}: typeof import\\("\\./([^"]+)"\\)\\.${name};`));
  if (!m) {
    throw new Error(`${namespace}/index.d.ts exports no ${name}`);
  }
  return `${namespace}/${m[1]}.d.ts`;
}

/** gcp:cloudfunctionsv2/function:Function -> cloudfunctionsv2/function.d.ts, FunctionArgs and FunctionState. */
function typeSchema(kind, type, entry, labelFields, inputs) {
  const [, module, name] = entry.current.split(':');
  const file = parse(moduleFile(module.split('/')[0], name));
  const declared = interfaces(file);
  const pascal = name.charAt(0).toUpperCase() + name.slice(1);
  const args = declared.get(pascal + 'Args') || [];
  const all = declared.get(pascal + (kind === 'resource' ? 'State' : 'Result'));
  if (!all) {
    throw new Error(`${file.fileName} declares no ${pascal}${kind === 'resource' ? 'State' : 'Result'} (${type})`);
  }
  const argNames = new Set(args.map((p) => p.name));
  const properties = args.concat(all.filter((p) => !argNames.has(p.name)).map((p) => ({ ...p, outputOnly: true })));
  return { token: entry.current, arguments: level(type, properties, entry.fields, inputs, labelFields) };
}

/** One level of arguments under Terraform's names: {name: {required?, outputOnly?, block?}}. */
function level(where, properties, fields, inputs, labelFields = []) {
  const names = terraformNames(where, properties.map((p) => p.name), fields || {}, labelFields);
  const result = {};
  for (const p of properties) {
    const tf = names.get(p.name);
    const arg = {};
    if (p.required && !p.outputOnly) arg.required = true;
    if (p.outputOnly) arg.outputOnly = true;
    if (p.nested && !p.outputOnly) {
      const nested = inputs.get(p.nested);
      if (!nested) {
        throw new Error(`${where}.${tf}: types/input.d.ts declares no ${p.nested}`);
      }
      const meta = (fields || {})[tf];
      arg.block = level(`${where}.${tf}`, nested, meta && meta.elem ? meta.elem.fields : {}, inputs);
    }
    result[tf] = arg;
  }
  return sortKeys(result);
}

/**
 * Pulumi name -> Terraform name. A list field keeps its name or takes a plural (lifecycle_rule -> lifecycleRules);
 * every other name is camelCase of the Terraform one. Every list field of the metadata must be matched: a plural
 * this code does not know fails here instead of naming a field wrongly.
 */
function terraformNames(where, pulumiNames, fields, labelFields) {
  const names = new Map();
  const present = new Set(pulumiNames);
  for (const [tf, meta] of Object.entries(fields)) {
    const camel = camelCase(tf);
    const candidates = meta.maxItemsOne === false ? [camel, ...plurals(camel)] : [camel];
    const match = candidates.find((c) => present.has(c));
    if (!match) {
      throw new Error(`${where}.${tf}: no Pulumi property among ${candidates.join(', ')}`);
    }
    names.set(match, tf);
  }
  for (const p of pulumiNames) {
    if (names.has(p)) continue;
    // fix-label-names: Pulumi calls terraform_labels pulumiLabels.
    const tf = p === 'pulumiLabels' && labelFields.includes('terraform_labels') ? 'terraform_labels' : snakeCase(p);
    if (p !== 'pulumiLabels' && camelCase(tf) !== p) {
      throw new Error(`${where}: ${p} does not round-trip through snake_case (${tf})`);
    }
    names.set(p, tf);
  }
  return names;
}

function camelCase(snake) {
  return snake.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function snakeCase(camel) {
  return camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

function plurals(word) {
  const forms = [word + 's', word + 'es'];
  if (/[^aeiou]y$/.test(word)) forms.push(word.slice(0, -1) + 'ies');
  return forms;
}

const parsed = new Map();

function parse(relative) {
  if (!parsed.has(relative)) {
    const file = path.join(PULUMI, relative);
    parsed.set(relative, ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true));
  }
  return parsed.get(relative);
}

/** Every interface of a .d.ts by name; inside `namespace ns` as "ns.Name". */
function interfaces(source) {
  const found = new Map();
  const visit = (node, prefix) => {
    if (ts.isModuleDeclaration(node) && node.body && ts.isModuleBlock(node.body)) {
      node.body.statements.forEach((s) => visit(s, prefix + node.name.text + '.'));
    } else if (ts.isInterfaceDeclaration(node)) {
      found.set(prefix + node.name.text, node.members.filter(ts.isPropertySignature).map(property));
    }
  };
  source.statements.forEach((s) => visit(s, ''));
  return found;
}

function property(member) {
  const shape = { nested: null };
  typeShape(member.type, shape);
  const docs = ts.getJSDocCommentsAndTags(member).map((d) => ts.getTextOfJSDocComment(d.comment) || '').join('\n');
  return {
    name: member.name.text,
    required: !member.questionToken,
    nested: shape.nested,
    // The provider docs mark a nested output-only attribute "(Output)" (also "(Output, Beta)", "(Output, Deprecated)").
    outputOnly: /^\s*\(Output[,)]/.test(docs),
  };
}

/** Finds, through pulumi.Input<…>, unions and arrays, the inputs.ns.Type a property holds. */
function typeShape(node, shape) {
  if (!node) return;
  if (ts.isArrayTypeNode(node)) {
    typeShape(node.elementType, shape);
  } else if (ts.isUnionTypeNode(node)) {
    node.types.forEach((t) => typeShape(t, shape));
  } else if (ts.isParenthesizedTypeNode(node)) {
    typeShape(node.type, shape);
  } else if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText();
    if (name === 'pulumi.Input' || name === 'pulumi.Output') {
      (node.typeArguments || []).forEach((t) => typeShape(t, shape));
    } else if (name.startsWith('inputs.')) {
      shape.nested = name.slice('inputs.'.length);
    }
  }
}

function sortKeys(object) {
  return Object.fromEntries(Object.keys(object).sort().map((k) => [k, object[k]]));
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

try {
  main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`generate.js: ${e.message}\n`);
  process.exit(1);
}
