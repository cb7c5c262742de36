package dev.once.local.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.retrying.RetrySettings;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.http.Receiver;
import dev.once.wire.net.TcpProxy;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The relay loses answers to requests the server carried out, and still cuts and restores as an outage. */
class TcpProxyTest {
  private static final Duration WAIT = Duration.ofSeconds(5);

  private static HttpResponse<String> post(HttpClient http, TcpProxy proxy, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://" + proxy.hostPort() + path)).timeout(WAIT)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void droppedAnswer_http1_theServerGotTheRequest_theClientSeesAFailure() throws Exception {
    try (Receiver server = Receiver.start(); TcpProxy proxy = TcpProxy.start("127.0.0.1:" + server.url("/").getPort());
        HttpClient http = HttpClient.newHttpClient()) {
      proxy.dropAnswersOfNext(1);

      assertThrows(IOException.class, () -> post(http, proxy, "/commit"));
      assertEquals(1, server.receivedOn("/commit").size(), "carried out");
      assertEquals(1, proxy.counters().get("answersDropped"));

      assertEquals(200, post(http, proxy, "/commit").statusCode(), "only the next connection was armed");
      assertEquals(2, server.receivedOn("/commit").size());
    }
  }

  @Test
  void droppingForAWindow_reachesConnectionsAlreadyOpen() throws Exception {
    try (Receiver server = Receiver.start(); TcpProxy proxy = TcpProxy.start("127.0.0.1:" + server.url("/").getPort());
        HttpClient http = HttpClient.newHttpClient()) {
      assertEquals(200, post(http, proxy, "/a").statusCode()); // opens a kept-alive connection
      proxy.dropAnswersFor(Duration.ofMinutes(1));

      assertThrows(IOException.class, () -> post(http, proxy, "/a"));
      assertThrows(IOException.class, () -> post(http, proxy, "/a"));
      proxy.stopDroppingAnswers();

      assertEquals(200, post(http, proxy, "/a").statusCode());
      assertEquals(4, server.receivedOn("/a").size(), "every request was carried out");
      assertEquals(2, proxy.counters().get("answersDropped"));
    }
  }

  @Test
  void cutAndRestore_refuseConnections_withoutReachingTheServer() throws Exception {
    try (Receiver server = Receiver.start(); TcpProxy proxy = TcpProxy.start("127.0.0.1:" + server.url("/").getPort());
        HttpClient http = HttpClient.newHttpClient()) {
      proxy.cut();
      assertThrows(IOException.class, () -> post(http, proxy, "/b"));
      assertEquals(0, server.received().size());
      proxy.restore();
      assertEquals(200, post(http, proxy, "/b").statusCode());
      assertEquals(1, server.received().size());
    }
  }

  @Test
  void droppedAnswer_grpc_aPubSubPublishIsStoredOnce_andThePublisherSeesAFailure() throws Exception {
    PubSubEmulator emulator = PubSubEmulator.shared();
    String topic = "projects/p/topics/dropped-" + System.nanoTime();
    String subscription = "projects/p/subscriptions/dropped-" + System.nanoTime();
    try (PubSubAdmin admin = new PubSubAdmin(emulator.hostPort());
        TcpProxy proxy = TcpProxy.start(emulator.hostPort())) {
      admin.createTopic(topic);
      admin.createSubscription(subscription, topic);
      proxy.dropAnswersOfNext(1);

      ManagedChannel channel = ManagedChannelBuilder.forTarget(proxy.hostPort()).usePlaintext().build();
      Publisher publisher = Publisher.newBuilder(TopicName.parse(topic))
          .setChannelProvider(FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel)))
          .setCredentialsProvider(NoCredentialsProvider.create())
          .setRetrySettings(RetrySettings.newBuilder().setMaxAttempts(1)
              .setTotalTimeoutDuration(Duration.ofSeconds(20)).setInitialRpcTimeoutDuration(Duration.ofSeconds(20))
              .setMaxRpcTimeoutDuration(Duration.ofSeconds(20)).build())
          .build();
      try {
        ExecutionException failed = assertThrows(ExecutionException.class, () -> publisher.publish(
            PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8("once")).build()).get(30, TimeUnit.SECONDS));
        assertInstanceOf(ApiException.class, failed.getCause());
      } finally {
        publisher.shutdown();
        publisher.awaitTermination(10, TimeUnit.SECONDS);
        channel.shutdownNow();
      }

      List<PubsubMessage> stored = new ArrayList<>();
      Await.until(Bounds.CALL, () -> stored.addAll(admin.pull(subscription)) || !stored.isEmpty(),
          "the published message");
      stored.addAll(admin.pull(subscription));
      assertEquals(1, stored.size(), "carried out exactly once");
      assertEquals("once", stored.get(0).getData().toStringUtf8());
      assertEquals(1, proxy.counters().get("answersDropped"));
    }
  }
}
