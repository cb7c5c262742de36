package dev.once.gemini;

import com.google.genai.types.BatchJob;
import com.google.genai.types.JobState;
import java.util.Optional;
import java.util.Set;

/** A batch job's state, as the SDK gives it: known or not, ended or not, answered or not. */
public final class JobStates {
  private static final Set<JobState.Known> TERMINAL = Set.of(
      JobState.Known.JOB_STATE_SUCCEEDED,
      JobState.Known.JOB_STATE_FAILED,
      JobState.Known.JOB_STATE_CANCELLED,
      JobState.Known.JOB_STATE_EXPIRED,
      JobState.Known.JOB_STATE_PARTIALLY_SUCCEEDED);

  private JobStates() {}

  public static boolean isTerminal(BatchJob job) {
    return state(job).map(TERMINAL::contains).orElse(false);
  }

  public static Optional<JobState.Known> state(BatchJob job) {
    return job.state().map(JobState::knownEnum);
  }

  public static boolean succeeded(BatchJob job) {
    return state(job)
        .map(s -> s == JobState.Known.JOB_STATE_SUCCEEDED || s == JobState.Known.JOB_STATE_PARTIALLY_SUCCEEDED)
        .orElse(false);
  }
}
