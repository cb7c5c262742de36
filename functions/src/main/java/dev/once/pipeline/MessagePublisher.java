package dev.once.pipeline;

import com.google.api.core.ApiFuture;
import com.google.api.gax.batching.BatchingSettings;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.retrying.RetrySettings;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes to Pub/Sub topics, one publisher per topic, built on first use and kept for the instance. Batching is
 * off: a function publishes one message per event and must know it was accepted before it records the effect.
 * Honours PUBSUB_EMULATOR_HOST.
 */
public final class MessagePublisher implements AutoCloseable {
  /**
   * The bound on one publish, the client's own retries included: a publish takes milliseconds, and a publisher's lease
   * must outlast this before it starts (so a holder that dies mid-publish is taken over after about as long).
   */
  public static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final String emulatorHost;
  private final Map<String, Publisher> publishers = new ConcurrentHashMap<>();
  private volatile ManagedChannel emulatorChannel;

  /** @param emulatorHost host:port of the Pub/Sub emulator, or null for Google's service */
  public MessagePublisher(String emulatorHost) {
    this.emulatorHost = emulatorHost;
  }

  /** Publishes and waits for the server's message id (bounded). Throws on failure: the caller retries. */
  public String publish(String topic, byte[] data, Map<String, String> attributes) {
    PubsubMessage message = PubsubMessage.newBuilder()
        .setData(ByteString.copyFrom(data))
        .putAllAttributes(attributes)
        .build();
    ApiFuture<String> id = publisher(topic).publish(message);
    try {
      return id.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      id.cancel(true);
      throw new IllegalStateException("Pub/Sub did not accept the message to " + topic + " within " + TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing to " + topic, e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof DeadlineExceededException) {
        // The client's own total timeout (the same bound) ran out first: the same failure, said the same way.
        throw new IllegalStateException("Pub/Sub did not accept the message to " + topic + " within " + TIMEOUT,
            e.getCause());
      }
      throw new IllegalStateException("Pub/Sub refused the message to " + topic + ": " + e.getCause().getMessage(),
          e.getCause());
    }
  }

  private Publisher publisher(String topic) {
    return publishers.computeIfAbsent(topic, this::build);
  }

  private Publisher build(String topic) {
    try {
      Publisher.Builder builder = Publisher.newBuilder(TopicName.parse(topic))
          .setBatchingSettings(BatchingSettings.newBuilder().setIsEnabled(false).build())
          .setRetrySettings(RetrySettings.newBuilder()
              .setTotalTimeout(org.threeten.bp.Duration.ofMillis(TIMEOUT.toMillis()))
              .setInitialRetryDelay(org.threeten.bp.Duration.ofMillis(100))
              .setRetryDelayMultiplier(2)
              .setMaxRetryDelay(org.threeten.bp.Duration.ofSeconds(5))
              .setInitialRpcTimeout(org.threeten.bp.Duration.ofSeconds(10))
              .setRpcTimeoutMultiplier(1)
              .setMaxRpcTimeout(org.threeten.bp.Duration.ofSeconds(10))
              .build());
      if (emulatorHost != null) {
        builder.setChannelProvider(FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel())))
            .setCredentialsProvider(NoCredentialsProvider.create());
      }
      return builder.build();
    } catch (IOException e) {
      throw new UncheckedIOException("could not create a publisher for " + topic, e);
    }
  }

  private synchronized ManagedChannel channel() {
    if (emulatorChannel == null) {
      emulatorChannel = ManagedChannelBuilder.forTarget(emulatorHost).usePlaintext().build();
    }
    return emulatorChannel;
  }

  @Override
  public void close() {
    publishers.values().forEach(p -> {
      p.shutdown();
      try {
        p.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    if (emulatorChannel != null) {
      emulatorChannel.shutdownNow();
    }
  }
}
