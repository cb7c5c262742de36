package dev.once.cli.stats;

import com.google.cloud.monitoring.v3.MetricServiceClient;
import com.google.cloud.monitoring.v3.MetricServiceSettings;
import com.google.monitoring.v3.Aggregation;
import com.google.monitoring.v3.ListTimeSeriesRequest;
import com.google.monitoring.v3.Point;
import com.google.monitoring.v3.TimeInterval;
import com.google.monitoring.v3.TimeSeries;
import com.google.protobuf.util.Timestamps;
import dev.once.cli.Failure;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;

/**
 * Outcomes per effect from the log-based metric of a deployed project ({@code logging.googleapis.com/user/
 * PREFIX_outcomes}, terraform/observability.tf), read with the Cloud Monitoring API: the window's deltas summed per
 * (effect, outcome) by Monitoring itself, one series each. The same numbers as the dashboard's outcome chart.
 */
final class MonitoringCounts {
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
  /** Monitoring aligns over 60 s at the least. */
  static final Duration SHORTEST = Duration.ofMinutes(1);

  private MonitoringCounts() {}

  static String metricType(String prefix) {
    return "logging.googleapis.com/user/" + prefix.replace('-', '_') + "_outcomes";
  }

  /** The request: the whole window as one alignment period, summed across instances and functions. */
  static ListTimeSeriesRequest request(String project, String prefix, Instant end, Duration since) {
    return ListTimeSeriesRequest.newBuilder()
        .setName("projects/" + project)
        .setFilter("metric.type = \"" + metricType(prefix) + "\"")
        .setInterval(TimeInterval.newBuilder()
            .setStartTime(Timestamps.fromMillis(end.minus(since).toEpochMilli()))
            .setEndTime(Timestamps.fromMillis(end.toEpochMilli())))
        .setAggregation(Aggregation.newBuilder()
            .setAlignmentPeriod(com.google.protobuf.Duration.newBuilder().setSeconds(since.toSeconds()))
            .setPerSeriesAligner(Aggregation.Aligner.ALIGN_SUM)
            .setCrossSeriesReducer(Aggregation.Reducer.REDUCE_SUM)
            .addGroupByFields("metric.label.effect")
            .addGroupByFields("metric.label.outcome"))
        .setView(ListTimeSeriesRequest.TimeSeriesView.FULL)
        .build();
  }

  static Counts count(MetricServiceClient client, ListTimeSeriesRequest request) {
    Counts counts = new Counts(true);
    try {
      for (TimeSeries series : client.listTimeSeries(request).iterateAll()) {
        long sum = 0;
        for (Point point : series.getPointsList()) {
          sum += point.getValue().hasInt64Value() ? point.getValue().getInt64Value()
              : Math.round(point.getValue().getDoubleValue());
        }
        counts.add(series.getMetric().getLabelsOrDefault("effect", "?"),
            series.getMetric().getLabelsOrDefault("outcome", "?"), sum);
      }
    } catch (RuntimeException e) {
      throw Failure.remote("Cloud Monitoring could not be read for " + request.getName() + ": " + Failure.reason(e)
          + " (the account needs roles/monitoring.viewer)", e);
    }
    return counts;
  }

  /** A client with the application default credentials, every call bounded. */
  static MetricServiceClient client() {
    try {
      MetricServiceSettings.Builder settings = MetricServiceSettings.newBuilder();
      settings.listTimeSeriesSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      return MetricServiceClient.create(settings.build());
    } catch (IOException | RuntimeException e) {
      throw Failure.remote("cannot connect to Cloud Monitoring: " + Failure.reason(e), e);
    }
  }
}
