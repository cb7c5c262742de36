package dev.once.cli.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.Metric;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.cloud.monitoring.v3.MetricServiceClient;
import com.google.cloud.monitoring.v3.MetricServiceSettings;
import com.google.monitoring.v3.Aggregation;
import com.google.monitoring.v3.ListTimeSeriesRequest;
import com.google.monitoring.v3.ListTimeSeriesResponse;
import com.google.monitoring.v3.Point;
import com.google.monitoring.v3.TimeSeries;
import com.google.monitoring.v3.TypedValue;
import com.google.protobuf.util.Timestamps;
import dev.once.observe.OutcomeLabel;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code once stats} against a deployed project reads the log-based metric through the Monitoring API: here a fake
 * MetricService over real gRPC (the client's own protocol; the service's generated stubs are not published where
 * this builds, so the method is declared by its proto name) answers in two pages, and the test checks what was asked.
 */
class MonitoringCountsTest {
  private final List<ListTimeSeriesRequest> requests = new CopyOnWriteArrayList<>();
  private Server server;
  private ManagedChannel channel;
  private MetricServiceClient client;

  @BeforeEach
  void start() throws Exception {
    server = ServerBuilder.forPort(0).addService(ServerServiceDefinition.builder(SERVICE)
        .addMethod(LIST_TIME_SERIES, ServerCalls.asyncUnaryCall(this::listTimeSeries)).build()).build().start();
    channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    client = MetricServiceClient.create(MetricServiceSettings.newBuilder()
        .setTransportChannelProvider(FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel)))
        .setCredentialsProvider(NoCredentialsProvider.create()).build());
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    channel.shutdownNow();
    server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
  }

  /** Monitoring's ListTimeSeries, as google/monitoring/v3/metric_service.proto names it. */
  private static final String SERVICE = "google.monitoring.v3.MetricService";
  private static final MethodDescriptor<ListTimeSeriesRequest, ListTimeSeriesResponse> LIST_TIME_SERIES =
      MethodDescriptor.<ListTimeSeriesRequest, ListTimeSeriesResponse>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "ListTimeSeries"))
          .setRequestMarshaller(ProtoUtils.marshaller(ListTimeSeriesRequest.getDefaultInstance()))
          .setResponseMarshaller(ProtoUtils.marshaller(ListTimeSeriesResponse.getDefaultInstance()))
          .build();

  /** Two pages, as Monitoring pages a long answer. */
  private void listTimeSeries(ListTimeSeriesRequest request, StreamObserver<ListTimeSeriesResponse> answer) {
    requests.add(request);
    ListTimeSeriesResponse.Builder page = ListTimeSeriesResponse.newBuilder();
    if (request.getPageToken().isEmpty()) {
      page.addTimeSeries(series("analyse", "processed", 3, 2)).addTimeSeries(series("analyse", "duplicate", 5))
          .setNextPageToken("page-2");
    } else {
      page.addTimeSeries(series("publish", "processed", 4)).addTimeSeries(series("analyse", "in_flight", 2));
    }
    answer.onNext(page.build());
    answer.onCompleted();
  }

  private static TimeSeries series(String effect, String outcome, long... values) {
    TimeSeries.Builder series = TimeSeries.newBuilder().setMetric(Metric.newBuilder()
        .setType("logging.googleapis.com/user/once_outcomes").putLabels("effect", effect)
        .putLabels("outcome", outcome));
    for (long v : values) {
      series.addPoints(Point.newBuilder().setValue(TypedValue.newBuilder().setInt64Value(v)));
    }
    return series.build();
  }

  @Test
  void asksForTheWindowSummedPerEffectAndOutcome_andFoldsEveryPage() throws Exception {
    Instant end = Instant.parse("2026-11-30T12:00:00Z");
    Counts counts =
        MonitoringCounts.count(client, MonitoringCounts.request("my-project", "once", end, Duration.ofHours(1)));

    ListTimeSeriesRequest asked = requests.get(0);
    assertEquals("projects/my-project", asked.getName());
    assertEquals("metric.type = \"logging.googleapis.com/user/once_outcomes\"", asked.getFilter());
    assertEquals(Timestamps.parse("2026-11-30T11:00:00Z"), asked.getInterval().getStartTime());
    assertEquals(Timestamps.parse("2026-11-30T12:00:00Z"), asked.getInterval().getEndTime());
    assertEquals(3600, asked.getAggregation().getAlignmentPeriod().getSeconds());
    assertEquals(Aggregation.Aligner.ALIGN_SUM, asked.getAggregation().getPerSeriesAligner());
    assertEquals(Aggregation.Reducer.REDUCE_SUM, asked.getAggregation().getCrossSeriesReducer());
    assertEquals(List.of("metric.label.effect", "metric.label.outcome"), asked.getAggregation().getGroupByFieldsList());
    assertEquals(2, requests.size(), "both pages read");

    assertEquals(5, counts.get("analyse", OutcomeLabel.PROCESSED));
    assertEquals(5, counts.get("analyse", OutcomeLabel.DUPLICATE));
    assertEquals(4, counts.get("publish", OutcomeLabel.PROCESSED));
    StringWriter table = new StringWriter();
    counts.print(new PrintWriter(table, true));
    assertTrue(table.toString().contains("analyse               5          5          0          0          0    41.7 %"
        + "  in_flight 2"), table.toString());
  }

  @Test
  void theMetricName_followsTerraformsNamePrefix() {
    assertEquals("logging.googleapis.com/user/acme_once_outcomes", MonitoringCounts.metricType("acme-once"));
  }
}
