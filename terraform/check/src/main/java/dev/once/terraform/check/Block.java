package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One top-level Terraform block as the HCL parser gives it: {@code resource "type" "name" { body }} and the like.
 *
 * @param kind resource, data, variable, output or module
 * @param type the resource or data source type; empty for the other kinds
 */
public record Block(String kind, String type, String name, String file, JsonNode body) {

  /** The address Terraform uses in references and messages. */
  public String address() {
    return switch (kind) {
      case "resource" -> type + "." + name;
      case "data" -> "data." + type + "." + name;
      case "variable" -> "var." + name;
      default -> kind + "." + name;
    };
  }

  /** The first nested block of that name ({@code service_config { … }}), or a missing node. */
  public JsonNode nested(String... names) {
    JsonNode node = body;
    for (String n : names) {
      node = node.path(n);
      if (node.isArray()) {
        node = node.path(0);
      }
    }
    return node;
  }
}
