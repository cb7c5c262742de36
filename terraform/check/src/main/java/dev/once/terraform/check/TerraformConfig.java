package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every .tf file of one directory as HashiCorp's HCL parser turned it into JSON, with the references it found in
 * each expression. Expressions stay strings of the form {@code ${…}}; literals are plain JSON values.
 */
public final class TerraformConfig {
  /** A reference found by the parser in one expression; {@code path} is the JSON path of that expression. */
  public record Reference(String file, List<String> path, String ref) {}

  /** A file the parser rejected. */
  public record ParseError(String file, String message) {}

  private static final Pattern LOCAL_REF = Pattern.compile("^\\$\\{local\\.([A-Za-z0-9_-]+)\\}$");
  private static final Pattern ATTRIBUTE_REF =
      Pattern.compile("^\\$\\{([a-z][a-z0-9_]*)\\.([A-Za-z0-9_-]+)\\.([a-z_]+)\\}$");

  private final Map<String, JsonNode> files;
  private final List<Reference> references;
  private final List<ParseError> errors;

  TerraformConfig(Map<String, JsonNode> files, List<Reference> references, List<ParseError> errors) {
    this.files = Map.copyOf(files);
    this.references = List.copyOf(references);
    this.errors = List.copyOf(errors);
  }

  public List<Reference> references() {
    return references;
  }

  public List<ParseError> errors() {
    return errors;
  }

  /** Every block of a kind with a type label: resource or data. */
  public List<Block> typed(String kind) {
    List<Block> blocks = new ArrayList<>();
    for (var file : new TreeMap<>(files).entrySet()) {
      JsonNode byType = file.getValue().path(kind);
      for (Iterator<String> types = byType.fieldNames(); types.hasNext();) {
        String type = types.next();
        for (Iterator<String> names = byType.path(type).fieldNames(); names.hasNext();) {
          String name = names.next();
          for (JsonNode body : asList(byType.path(type).path(name))) {
            blocks.add(new Block(kind, type, name, file.getKey(), body));
          }
        }
      }
    }
    return blocks;
  }

  public List<Block> resources() {
    return typed("resource");
  }

  public List<Block> resources(String type) {
    return resources().stream().filter(b -> b.type().equals(type)).toList();
  }

  /** Every block of a kind with one name label: variable, output, module, provider. */
  public List<Block> named(String kind) {
    List<Block> blocks = new ArrayList<>();
    for (var file : new TreeMap<>(files).entrySet()) {
      JsonNode byName = file.getValue().path(kind);
      for (Iterator<String> names = byName.fieldNames(); names.hasNext();) {
        String name = names.next();
        for (JsonNode body : asList(byName.path(name))) {
          blocks.add(new Block(kind, "", name, file.getKey(), body));
        }
      }
    }
    return blocks;
  }

  /** Every local value by name, with the file that defines it (a name defined twice appears once per file). */
  public List<Block> locals() {
    List<Block> blocks = new ArrayList<>();
    for (var file : new TreeMap<>(files).entrySet()) {
      for (JsonNode localsBlock : asList(file.getValue().path("locals"))) {
        for (Iterator<Map.Entry<String, JsonNode>> it = localsBlock.fields(); it.hasNext();) {
          var entry = it.next();
          blocks.add(new Block("local", "", entry.getKey(), file.getKey(), entry.getValue()));
        }
      }
    }
    return blocks;
  }

  /** Provider local names declared in terraform { required_providers { … } }. */
  public List<String> requiredProviders() {
    return providerRequirements().stream().map(Block::name).toList();
  }

  /** Each entry of terraform { required_providers { … } }: its local name, and {@code source} and {@code version}. */
  public List<Block> providerRequirements() {
    List<Block> requirements = new ArrayList<>();
    for (var file : new TreeMap<>(files).entrySet()) {
      for (JsonNode terraform : asList(file.getValue().path("terraform"))) {
        for (JsonNode required : asList(terraform.path("required_providers"))) {
          required.fields().forEachRemaining(
              p -> requirements.add(new Block("required_provider", "", p.getKey(), file.getKey(), p.getValue())));
        }
      }
    }
    return requirements;
  }

  /**
   * The literal text an attribute value stands for: the value itself when it is a literal, or the literal behind a
   * {@code ${local.x}} or a {@code ${type.name.attribute}} whose attribute is itself a literal. Empty when the value
   * is computed.
   */
  public Optional<String> literal(JsonNode value) {
    return literal(value, 0);
  }

  private Optional<String> literal(JsonNode value, int depth) {
    if (value == null || value.isMissingNode() || value.isNull() || depth > 8) {
      return Optional.empty();
    }
    if (value.isNumber() || value.isBoolean()) {
      return Optional.of(value.asText());
    }
    if (!value.isTextual()) {
      return Optional.empty();
    }
    String text = value.asText();
    if (!text.contains("${") && !text.contains("%{")) {
      return Optional.of(text);
    }
    Matcher local = LOCAL_REF.matcher(text);
    if (local.matches()) {
      return locals().stream()
          .filter(l -> l.name().equals(local.group(1)))
          .findFirst()
          .flatMap(l -> literal(l.body(), depth + 1));
    }
    Matcher attribute = ATTRIBUTE_REF.matcher(text);
    if (attribute.matches()) {
      return resources(attribute.group(1)).stream()
          .filter(r -> r.name().equals(attribute.group(2)))
          .findFirst()
          .flatMap(r -> literal(r.body().path(attribute.group(3)), depth + 1));
    }
    return Optional.empty();
  }

  /** Arrays as they are, a single object as a one-element list, anything else as nothing. */
  static List<JsonNode> asList(JsonNode node) {
    if (node.isArray()) {
      List<JsonNode> list = new ArrayList<>();
      node.forEach(list::add);
      return list;
    }
    return node.isObject() ? List.of(node) : List.of();
  }

  /** The names of the functions (google_cloudfunctions2_function) by entry point, in file order. */
  public Map<String, Block> functionsByEntryPoint() {
    Map<String, Block> byEntryPoint = new LinkedHashMap<>();
    for (Block function : resources("google_cloudfunctions2_function")) {
      literal(function.nested("build_config").path("entry_point"))
          .ifPresent(entryPoint -> byEntryPoint.putIfAbsent(entryPoint, function));
    }
    return byEntryPoint;
  }
}
