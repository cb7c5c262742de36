package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.terraform.check.TerraformConfig.Reference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every file parses; every reference ({@code google_x.y}, {@code var.x}, {@code local.x}, {@code data.x.y},
 * {@code module.x}, {@code each}/{@code count}) resolves to a declaration, including the key of a
 * {@code for_each} resource when both are literal; nothing is declared twice; every variable, local and data source
 * is used.
 * This is what {@code terraform validate} would catch first, done without the binary.
 */
public final class ReferenceCheck implements Check {
  private static final Set<String> ALWAYS_DEFINED = Set.of("path", "terraform", "self");
  private static final Pattern QUOTED = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern TOSET_LITERAL = Pattern.compile("^\\$\\{toset\\(\\[(.*)\\]\\)\\}$", Pattern.DOTALL);
  private static final Pattern LOCAL_ONLY = Pattern.compile("^\\$\\{local\\.([A-Za-z0-9_-]+)\\}$");

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    for (var error : config.errors()) {
      findings.add(new Finding(error.file(), "(whole file)", "does not parse as HCL: " + error.message(),
          "fix the syntax at the position the parser names."));
    }
    Declarations declared = new Declarations(config, findings);
    Set<String> usedVariables = new HashSet<>();
    Set<String> usedLocals = new HashSet<>();
    Set<String> usedData = new HashSet<>();
    for (Reference reference : config.references()) {
      check(config, declared, reference, findings, usedVariables, usedLocals);
      List<String> parts = split(reference.ref());
      if (parts.get(0).equals("data")) {
        usedData.add("data." + part(parts, 1) + "." + part(parts, 2));
      }
    }
    for (Block data : config.typed("data")) {
      if (!usedData.contains(data.address())) {
        findings.add(new Finding(data.file(), data.address(), "is read but never used.",
            "delete it (every plan calls its API for nothing)."));
      }
    }
    for (Block variable : config.named("variable")) {
      if (!usedVariables.contains(variable.name())) {
        findings.add(new Finding(variable.file(), variable.address(), "is declared but never used.",
            "use it where it belongs, or delete it (an unused input misleads whoever sets it)."));
      }
    }
    for (Block local : config.locals()) {
      if (!usedLocals.contains(local.name())) {
        findings.add(new Finding(local.file(), "local." + local.name(), "is defined but never used.", "delete it."));
      }
    }
    return findings;
  }

  private void check(TerraformConfig config, Declarations declared, Reference reference, List<Finding> findings,
      Set<String> usedVariables, Set<String> usedLocals) {
    List<String> path = reference.path();
    if (isTypeConstraint(path) || path.contains("ignore_changes")) {
      return; // `type = string` and ignore_changes hold attribute names, not references
    }
    List<String> parts = split(reference.ref());
    String root = parts.get(0);
    String at = enclosingAddress(path);
    if (isProviderArgument(path)) {
      if (!config.requiredProviders().contains(root)) {
        findings.add(new Finding(reference.file(), at,
            "uses provider \"" + root + "\", which required_providers does not declare.",
            "add it to terraform { required_providers } in versions.tf, or use a declared provider."));
      }
      return;
    }
    String missing = null;
    String fix = null;
    switch (root) {
      case "var" -> {
        usedVariables.add(part(parts, 1));
        if (!declared.variables.contains(part(parts, 1))) {
          missing = "var." + part(parts, 1);
          fix = "declare variable \"" + part(parts, 1) + "\" in variables.tf, or correct the name.";
        }
      }
      case "local" -> {
        usedLocals.add(part(parts, 1));
        if (!declared.locals.contains(part(parts, 1))) {
          missing = "local." + part(parts, 1);
          fix = "define it in a locals block, or correct the name.";
        }
      }
      case "data" -> {
        String address = "data." + part(parts, 1) + "." + part(parts, 2);
        if (!declared.blocks.containsKey(address)) {
          missing = address;
          fix = "declare data \"" + part(parts, 1) + "\" \"" + part(parts, 2) + "\", or correct the name.";
        } else {
          checkKey(config, declared.blocks.get(address), parts, 3, reference, at, findings);
        }
      }
      case "module" -> {
        if (!declared.blocks.containsKey("module." + part(parts, 1))) {
          missing = "module." + part(parts, 1);
          fix = "declare the module, or correct the name.";
        }
      }
      case "each", "count" -> {
        String meta = root.equals("each") ? "for_each" : "count";
        Block top = declared.blocks.get(at);
        if (top != null && !top.body().has(meta)) {
          findings.add(new Finding(reference.file(), at, "uses " + reference.ref() + " but has no " + meta + ".",
              "add " + meta + " to " + at + ", or stop using " + root + "."));
        }
      }
      default -> {
        if (ALWAYS_DEFINED.contains(root) || dynamicLabels(path).contains(root)) {
          return;
        }
        String address = root + "." + part(parts, 1);
        if (!declared.blocks.containsKey(address)) {
          missing = address;
          fix = "declare resource \"" + root + "\" \"" + part(parts, 1) + "\", or correct the name.";
        } else {
          checkKey(config, declared.blocks.get(address), parts, 2, reference, at, findings);
        }
      }
    }
    if (missing != null) {
      findings.add(new Finding(reference.file(), at, "refers to " + missing + ", which is not declared.", fix));
    }
  }

  /** For resource["key"] with a literal key and a literal for_each, the key must be one of the instances. */
  private static void checkKey(TerraformConfig config, Block target, List<String> parts, int keyIndex,
      Reference reference, String at, List<Finding> findings) {
    if (parts.size() <= keyIndex || !parts.get(keyIndex).startsWith("\"")) {
      return;
    }
    String key = parts.get(keyIndex).substring(1, parts.get(keyIndex).length() - 1);
    Optional<Set<String>> keys = forEachKeys(config, target.body().path("for_each"));
    if (keys.isPresent() && !keys.get().contains(key)) {
      findings.add(new Finding(reference.file(), at, "refers to " + target.address() + "[\"" + key
          + "\"], but its for_each has only " + keys.get() + ".",
          "use one of those keys, or add \"" + key + "\" to the for_each of " + target.address() + "."));
    }
  }

  /** The instance keys of a for_each when they are literal: toset([...]), a literal map, or a local holding one. */
  static Optional<Set<String>> forEachKeys(TerraformConfig config, JsonNode forEach) {
    if (forEach.isObject()) {
      Set<String> keys = new LinkedHashSet<>();
      forEach.fieldNames().forEachRemaining(keys::add);
      return Optional.of(keys);
    }
    if (!forEach.isTextual()) {
      return Optional.empty();
    }
    Matcher toset = TOSET_LITERAL.matcher(forEach.asText());
    if (toset.matches() && !toset.group(1).contains("${")) {
      Set<String> keys = new LinkedHashSet<>();
      Matcher quoted = QUOTED.matcher(toset.group(1));
      while (quoted.find()) {
        keys.add(quoted.group(1));
      }
      return Optional.of(keys);
    }
    Matcher local = LOCAL_ONLY.matcher(forEach.asText());
    if (local.matches()) {
      return config.locals().stream()
          .filter(l -> l.name().equals(local.group(1)))
          .findFirst()
          .flatMap(l -> forEachKeys(config, l.body()));
    }
    return Optional.empty();
  }

  private static boolean isTypeConstraint(List<String> path) {
    return path.size() == 4 && path.get(0).equals("variable") && path.get(3).equals("type");
  }

  private static boolean isProviderArgument(List<String> path) {
    return path.size() == 5 && (path.get(0).equals("resource") || path.get(0).equals("data"))
        && path.get(4).equals("provider");
  }

  /** Names a dynamic block makes available to its content: the block label (its default iterator name). */
  private static Set<String> dynamicLabels(List<String> path) {
    Set<String> labels = new HashSet<>();
    for (int i = 0; i + 1 < path.size(); i++) {
      if (path.get(i).equals("dynamic")) {
        labels.add(path.get(i + 1));
      }
    }
    return labels;
  }

  /** The address of the top-level block an expression sits in. */
  static String enclosingAddress(List<String> path) {
    if (path.isEmpty()) {
      return "(top level)";
    }
    return switch (path.get(0)) {
      case "resource" -> path.size() > 2 ? path.get(1) + "." + path.get(2) : "resource";
      case "data" -> path.size() > 2 ? "data." + path.get(1) + "." + path.get(2) : "data";
      case "variable" -> path.size() > 1 ? "var." + path.get(1) : "variable";
      case "locals" -> path.size() > 2 ? "local." + path.get(2) : "locals";
      default -> path.size() > 1 ? path.get(0) + "." + path.get(1) : path.get(0);
    };
  }

  private static String part(List<String> parts, int i) {
    return i < parts.size() ? parts.get(i) : "";
  }

  /** Splits a traversal on dots outside quotes: a."b.c".d → [a, "b.c", d]. */
  static List<String> split(String ref) {
    List<String> parts = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean quoted = false;
    for (char c : ref.toCharArray()) {
      if (c == '"') {
        quoted = !quoted;
      }
      if (c == '.' && !quoted) {
        parts.add(current.toString());
        current.setLength(0);
      } else {
        current.append(c);
      }
    }
    parts.add(current.toString());
    return parts;
  }

  /** Everything declared, by address; a second declaration of one address is a finding. */
  private static final class Declarations {
    final Map<String, Block> blocks = new HashMap<>();
    final Set<String> variables = new HashSet<>();
    final Set<String> locals = new HashSet<>();

    Declarations(TerraformConfig config, List<Finding> findings) {
      List<Block> all = new ArrayList<>();
      all.addAll(config.typed("resource"));
      all.addAll(config.typed("data"));
      all.addAll(config.named("variable"));
      all.addAll(config.named("output"));
      all.addAll(config.named("module"));
      all.addAll(config.locals());
      for (Block block : all) {
        String address = block.kind().equals("local") ? "local." + block.name() : block.address();
        Block previous = blocks.putIfAbsent(address, block);
        if (previous != null) {
          findings.add(new Finding(block.file(), address, "is declared twice (also in " + previous.file() + ").",
              "keep one declaration."));
        }
        if (block.kind().equals("variable")) {
          variables.add(block.name());
        } else if (block.kind().equals("local")) {
          locals.add(block.name());
        }
      }
    }
  }
}
