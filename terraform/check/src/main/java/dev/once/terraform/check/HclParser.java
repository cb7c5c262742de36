package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.local.node.NodeProject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses a directory of .tf files with HashiCorp's HCL parser: {@code hcl2json.js} beside the pom runs
 * {@code @cdktf/hcl2json} (the Go parser compiled to WASM) under Node, through the project's one {@link NodeProject}
 * (which installs the package from the module's own package-lock.json the first time it is missing, so a fresh clone
 * needs only Node and npm).
 */
public final class HclParser {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PACKAGE = "@cdktf/hcl2json";

  private final NodeProject node;

  /** @param moduleDir terraform/check: holds package.json, package-lock.json and hcl2json.js */
  public HclParser(Path moduleDir) {
    this.node = new NodeProject(moduleDir, PACKAGE);
  }

  public TerraformConfig parse(Path terraformDir) {
    return parseAll(List.of(terraformDir)).get(terraformDir);
  }

  /** Several directories in one Node run: the parser starts once and identical files are parsed once. */
  public Map<Path, TerraformConfig> parseAll(List<Path> terraformDirs) {
    List<String> args = terraformDirs.stream().map(d -> d.toAbsolutePath().toString()).toList();
    String out = node.run("hcl2json.js", args, Map.of(), 300);
    try {
      JsonNode all = JSON.readTree(out);
      Map<Path, TerraformConfig> configs = new LinkedHashMap<>();
      for (Path dir : terraformDirs) {
        configs.put(dir, toConfig(all.path(dir.toAbsolutePath().toString())));
      }
      return configs;
    } catch (IOException e) {
      throw new UncheckedIOException("reading the output of hcl2json.js", e);
    }
  }

  private static TerraformConfig toConfig(JsonNode result) {
    Map<String, JsonNode> files = new LinkedHashMap<>();
    result.path("files").fields().forEachRemaining(e -> files.put(e.getKey(), e.getValue()));
    List<TerraformConfig.Reference> references = new ArrayList<>();
    for (JsonNode r : result.path("references")) {
      List<String> path = new ArrayList<>();
      r.path("path").forEach(p -> path.add(p.asText()));
      references.add(new TerraformConfig.Reference(r.path("file").asText(), path, r.path("ref").asText()));
    }
    List<TerraformConfig.ParseError> errors = new ArrayList<>();
    for (JsonNode e : result.path("errors")) {
      errors.add(new TerraformConfig.ParseError(e.path("file").asText(), e.path("message").asText()));
    }
    return new TerraformConfig(files, references, errors);
  }
}
