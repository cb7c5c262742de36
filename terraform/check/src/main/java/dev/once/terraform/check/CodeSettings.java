package dev.once.terraform.check;

import dev.once.config.OnceSetting;
import dev.once.config.Setting;
import dev.once.pipeline.PipelineSetting;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Every environment variable the deployed code reads: the library's settings and the pipeline's. */
public final class CodeSettings {
  /** The source files that list them, and {@code Settings}, which reads them. */
  static final Set<String> REGISTRY = Set.of("dev/once/config/OnceSetting.java",
      "dev/once/pipeline/PipelineSetting.java", "dev/once/gemini/GeminiSetting.java", "dev/once/config/Settings.java");

  private CodeSettings() {}

  public static List<Setting> all() {
    List<Setting> all = new ArrayList<>(OnceSetting.values());
    all.addAll(PipelineSetting.values());
    return all;
  }
}
