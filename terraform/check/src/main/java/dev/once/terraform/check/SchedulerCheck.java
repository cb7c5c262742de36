package dev.once.terraform.check;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Cloud Scheduler calls the reconciler with POST: the HTTP functions answer 405 to any other method (so that a
 * health check's GET starts no run), and a scheduler job sending GET would fail every time.
 */
public final class SchedulerCheck implements Check {
  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    for (Block job : config.resources("google_cloud_scheduler_job")) {
      if (!job.nested("http_target").isObject()) {
        continue;
      }
      // Said explicitly: the method is then read here, not left to a default.
      Optional<String> method = config.literal(job.nested("http_target").path("http_method"));
      if (!method.equals(Optional.of("POST"))) {
        findings.add(new Finding(job.file(), job.address(), "sends http_method " + method.orElse("(unset)")
            + ", but the functions answer 405 to anything but POST.", "set http_target.http_method = \"POST\"."));
      }
    }
    return findings;
  }
}
