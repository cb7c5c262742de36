package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Parses a directory of .tf files with HashiCorp's HCL parser: {@code hcl2json.js} beside the pom runs
 * {@code @cdktf/hcl2json} (the Go parser compiled to WASM) under Node. The npm package is installed from the
 * module's own package-lock.json into its node_modules the first time it is missing, so a fresh clone needs only
 * Node and npm.
 */
public final class HclParser {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PACKAGE = "@cdktf/hcl2json";

  private final Path moduleDir;

  /** @param moduleDir terraform/check: holds package.json, package-lock.json and hcl2json.js */
  public HclParser(Path moduleDir) {
    this.moduleDir = moduleDir.toAbsolutePath().normalize();
  }

  public TerraformConfig parse(Path terraformDir) {
    return parseAll(List.of(terraformDir)).get(terraformDir);
  }

  /** Several directories in one Node run: the parser starts once and identical files are parsed once. */
  public Map<Path, TerraformConfig> parseAll(List<Path> terraformDirs) {
    ensureInstalled();
    Path out;
    try {
      out = Files.createTempFile("hcl2json", ".json");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      List<String> command = new ArrayList<>(List.of("node", moduleDir.resolve("hcl2json.js").toString()));
      terraformDirs.forEach(d -> command.add(d.toAbsolutePath().toString()));
      run(command, out, 300, "node hcl2json.js " + terraformDirs);
      JsonNode all = JSON.readTree(out.toFile());
      Map<Path, TerraformConfig> configs = new LinkedHashMap<>();
      for (Path dir : terraformDirs) {
        configs.put(dir, toConfig(all.path(dir.toAbsolutePath().toString())));
      }
      return configs;
    } catch (IOException e) {
      throw new UncheckedIOException("reading the output of hcl2json.js", e);
    } finally {
      try {
        Files.deleteIfExists(out);
      } catch (IOException ignored) {
        // a temp file left behind is harmless
      }
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

  /** npm ci when node_modules lacks the pinned version of the parser. Once per JVM. */
  private synchronized void ensureInstalled() {
    requireTool("node");
    if (installedVersion().equals(pinnedVersion())) {
      return;
    }
    requireTool("npm");
    run(List.of("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"), null, 600,
        "npm ci in " + moduleDir + " (installs " + PACKAGE + " " + pinnedVersion() + " from package-lock.json)");
    if (!installedVersion().equals(pinnedVersion())) {
      throw new IllegalStateException("npm ci in " + moduleDir + " did not install " + PACKAGE + " " + pinnedVersion());
    }
  }

  private String pinnedVersion() {
    return readJson(moduleDir.resolve("package.json")).path("dependencies").path(PACKAGE).asText();
  }

  private String installedVersion() {
    Path installed = moduleDir.resolve("node_modules").resolve(PACKAGE).resolve("package.json");
    return Files.isRegularFile(installed) ? readJson(installed).path("version").asText() : "";
  }

  private static JsonNode readJson(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file, e);
    }
  }

  private void requireTool(String tool) {
    try {
      Process p = new ProcessBuilder(tool, "--version").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) {
        return;
      }
    } catch (IOException e) {
      // reported below
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new IllegalStateException(tool + " is not on PATH: the Terraform checks parse HCL with " + PACKAGE
        + " under Node.js; install Node.js 18+ with npm (e.g. apt-get install nodejs npm)");
  }

  /** Runs a command in the module directory; stdout goes to {@code stdout} (or is kept for the error message). */
  private void run(List<String> command, Path stdout, long timeoutSeconds, String what) {
    try {
      Path log = Files.createTempFile("terraform-check", ".log");
      try {
        ProcessBuilder builder = new ProcessBuilder(command).directory(moduleDir.toFile());
        if (stdout != null) {
          builder.redirectOutput(stdout.toFile()).redirectError(log.toFile());
        } else {
          builder.redirectErrorStream(true).redirectOutput(log.toFile());
        }
        Process process = builder.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(what + " did not finish within " + timeoutSeconds + " s");
        }
        if (process.exitValue() != 0) {
          throw new IllegalStateException(what + " failed (exit " + process.exitValue() + "): "
              + Files.readString(log, StandardCharsets.UTF_8).strip());
        }
      } finally {
        Files.deleteIfExists(log);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + " was interrupted", e);
    }
  }
}
