package dev.once.terraform.check;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A provider's version range admits only majors this configuration was checked against: a new major may rename or
 * drop arguments, and a range left open to it (which a fresh {@code terraform init} installs first) would deploy
 * with a schema no one read. Admitting one means checking the configuration against it, then adding it here. The
 * Google providers' 7 is checked on every run ({@link SchemaCheck} against the committed 7.x schema); 6, the major
 * this configuration was written for, was checked by review against its documentation.
 */
public final class ProviderVersionCheck implements Check {
  /** Provider source → the majors whose schemas the .tf files were checked against. */
  static final Map<String, Set<Integer>> CHECKED_MAJORS = Map.of(
      "hashicorp/google", Set.of(6, 7),
      "hashicorp/google-beta", Set.of(6, 7),
      "hashicorp/time", Set.of(0),
      "hashicorp/archive", Set.of(2));

  private static final Pattern CONSTRAINT =
      Pattern.compile("\\s*(>=|<=|~>|!=|>|<|=)?\\s*v?(\\d+)(?:\\.(\\d+))?(?:\\.(\\d+))?\\S*\\s*");
  /** Far above any major a range could mean: "no upper bound". */
  private static final int UNBOUNDED = 1_000;

  private final Map<String, Set<Integer>> checked;

  public ProviderVersionCheck() {
    this(CHECKED_MAJORS);
  }

  ProviderVersionCheck(Map<String, Set<Integer>> checked) {
    this.checked = checked;
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    for (Block provider : config.providerRequirements()) {
      String source = provider.body().path("source").asText("hashicorp/" + provider.name());
      Set<Integer> majors = checked.getOrDefault(source, Set.of());
      String range = provider.body().path("version").asText("");
      String where = "required_providers." + provider.name();
      Optional<int[]> admitted = admittedMajors(range);
      if (admitted.isEmpty()) {
        findings
            .add(new Finding(provider.file(), where, "version \"" + range + "\" is not a range this check can read.",
                "write it as \">= X.Y, < N.0\"."));
        continue;
      }
      int low = admitted.get()[0];
      int high = admitted.get()[1];
      if (high >= UNBOUNDED) {
        findings.add(new Finding(provider.file(), where, "version \"" + range + "\" has no upper bound, so a fresh"
            + " terraform init installs whatever major is newest.",
            "cap it below the next major, e.g. \"< " + (low + 1) + ".0\"."));
        continue;
      }
      Set<Integer> unchecked = new TreeSet<>();
      for (int major = low; major <= high; major++) {
        if (!majors.contains(major)) {
          unchecked.add(major);
        }
      }
      if (!unchecked.isEmpty()) {
        findings.add(new Finding(provider.file(), where, "version \"" + range + "\" admits " + source + " major "
            + unchecked + ", whose schema this configuration was not checked against (checked: " + new TreeSet<>(majors)
            + ").",
            "cap the range below it, or check the .tf files against that major and add it to"
                + " ProviderVersionCheck.CHECKED_MAJORS."));
      }
    }
    return findings;
  }

  /** The lowest and highest major a Terraform version constraint admits; empty when a part cannot be read. */
  static Optional<int[]> admittedMajors(String range) {
    int low = 0;
    int high = UNBOUNDED;
    if (range.isBlank()) {
      return Optional.of(new int[] {low, high});
    }
    for (String part : range.split(",")) {
      Matcher m = CONSTRAINT.matcher(part);
      if (!m.matches()) {
        return Optional.empty();
      }
      String op = m.group(1) == null ? "=" : m.group(1);
      int major = Integer.parseInt(m.group(2));
      boolean onMajor = (m.group(3) == null || Integer.parseInt(m.group(3)) == 0)
          && (m.group(4) == null || Integer.parseInt(m.group(4)) == 0);
      switch (op) {
        case "=" -> {
          low = Math.max(low, major);
          high = Math.min(high, major);
        }
        case ">=", ">" -> low = Math.max(low, major);
        // ~> 6.33 allows 6.x; ~> 6 (one part) allows any newer major.
        case "~>" -> {
          low = Math.max(low, major);
          high = Math.min(high, m.group(3) == null ? UNBOUNDED : major);
        }
        case "<" -> high = Math.min(high, onMajor ? major - 1 : major);
        case "<=" -> high = Math.min(high, major);
        default -> {} // != narrows nothing a major bound needs
      }
    }
    return Optional.of(new int[] {low, high});
  }
}
