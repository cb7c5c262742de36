package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.terraform.check.ProviderSchema.Argument;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every google_* resource and data source reads right against a provider schema (the 7.x one: {@link
 * ProviderSchema#google7()}): its type exists, and each block sets only arguments and nested blocks the type has,
 * none that the provider computes (output-only), and every one it requires. Other providers' types (time, archive)
 * are not in the schema and are not checked; a type whose provider is not in required_providers is a finding.
 *
 * <p>Limits of the source: the schema is google-beta's, so a beta-only argument on a GA resource passes; Pulumi fills
 * in resource names itself, so a top-level {@code name} (and {@code account_id}, {@code secret_id}) reads as
 * optional and is never reported missing.
 */
public final class SchemaCheck implements Check {
  /** Terraform's own arguments of every block, not the provider's. */
  private static final Set<String> RESOURCE_META =
      Set.of("count", "for_each", "depends_on", "lifecycle", "provider", "provisioner", "connection");
  private static final Set<String> DATA_META = Set.of("count", "for_each", "depends_on", "lifecycle", "provider");
  /** Provider-wide: operation timeouts, which Pulumi takes as a resource option rather than an input. */
  private static final String TIMEOUTS = "timeouts";
  /** Terraform's built-in provider (terraform_data). */
  private static final String BUILT_IN = "terraform";

  private final ProviderSchema schema;

  public SchemaCheck(ProviderSchema schema) {
    this.schema = schema;
  }

  public static SchemaCheck google7() {
    return new SchemaCheck(ProviderSchema.google7());
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    List<String> providers = config.requiredProviders();
    for (String kind : List.of("resource", "data")) {
      for (Block block : config.typed(kind)) {
        String provider = block.type().substring(0, Math.max(0, block.type().indexOf('_')));
        if (!providers.contains(provider) && !(kind.equals("resource") && provider.equals(BUILT_IN))) {
          findings.add(new Finding(block.file(), block.address(), "is a type of provider \"" + provider
              + "\", which required_providers does not declare: terraform init cannot install it.",
              "correct the type, or declare the provider in versions.tf."));
        } else if (provider.equals("google")) {
          Optional<Map<String, Argument>> arguments = schema.arguments(kind, block.type());
          if (arguments.isEmpty()) {
            findings.add(new Finding(block.file(), block.address(), "is not a " + kind + " type of "
                + schema.describe() + ": misspelled, removed, or not extracted yet.",
                "correct the type; if it is one, add it to the schema: terraform/check/schema/generate.js"
                    + " --bridge-metadata (docs/DESIGN.md: the offline checks of terraform/)."));
          } else {
            new Walk(block, kind, findings).level(block.body(), "", arguments.get());
          }
        }
      }
    }
    return findings;
  }

  /** The findings of one block, level by level. */
  private final class Walk {
    private final Block block;
    private final String kind;
    private final List<Finding> findings;

    Walk(Block block, String kind, List<Finding> findings) {
      this.block = block;
      this.kind = kind;
      this.findings = findings;
    }

    void level(JsonNode body, String prefix, Map<String, Argument> arguments) {
      Set<String> present = new TreeSet<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext();) {
        var field = it.next();
        String name = field.getKey();
        if (prefix.isEmpty() && (kind.equals("resource") ? RESOURCE_META : DATA_META).contains(name)) {
          continue;
        }
        if (name.equals("dynamic")) {
          // dynamic "label" { for_each = …, content { … } }: the content is a block named label.
          field.getValue().fields().forEachRemaining(d -> TerraformConfig.asList(d.getValue()).forEach(
              generator -> argument(d.getKey(), generator.path("content"), prefix, arguments, present)));
        } else {
          argument(name, field.getValue(), prefix, arguments, present);
        }
      }
      arguments.forEach((name, argument) -> {
        if (argument.required() && !present.contains(name)) {
          add("lacks " + prefix + name + ", which " + schema.describe() + " requires.", "set " + prefix + name + ".");
        }
      });
    }

    private void argument(String name, JsonNode value, String prefix, Map<String, Argument> arguments,
        Set<String> present) {
      present.add(name);
      Argument argument = arguments.get(name);
      boolean topOfResource = prefix.isEmpty() && kind.equals("resource");
      if (argument == null && topOfResource && name.equals(TIMEOUTS)) {
        return;
      }
      if (argument == null && topOfResource && name.equals("id")) {
        add("sets id, which Terraform computes for every resource.", "remove it.");
      } else if (argument == null) {
        add("sets " + prefix + name + ", which " + block.type() + " does not have in " + schema.describe()
            + " (unknown, or removed).", "remove it, or use the argument's name in that version.");
      } else if (argument.outputOnly()) {
        add("sets " + prefix + name + ", which " + schema.describe() + " computes (output-only).", "remove it.");
      } else if (argument.isBlock()) {
        // Block syntax parses to a list of bodies; an expression (a variable holding the block) is not read.
        for (JsonNode nested : TerraformConfig.asList(value)) {
          level(nested, prefix + name + ".", argument.block());
        }
      }
    }

    private void add(String problem, String fix) {
      findings.add(new Finding(block.file(), block.address(), problem, fix));
    }
  }
}
