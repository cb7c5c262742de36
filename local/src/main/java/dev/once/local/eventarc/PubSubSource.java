package dev.once.local.eventarc;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.pubsub.v1.ProjectSubscriptionName;
import com.google.pubsub.v1.PubsubMessage;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Pulls one subscription on the Pub/Sub emulator with the real client and hands each message to the relay as a
 * {@code messagePublished} CloudEvent. A message is acked only once its delivery ended (delivered, or given up
 * and counted); if the relay stops first it is nacked, so Pub/Sub redelivers it.
 */
public final class PubSubSource implements AutoCloseable {
  private final ManagedChannel channel;
  private final Subscriber subscriber;
  private final String subscription;
  private final String topic;

  private PubSubSource(ManagedChannel channel, Subscriber subscriber, String subscription, String topic) {
    this.channel = channel;
    this.subscriber = subscriber;
    this.subscription = subscription;
    this.topic = topic;
  }

  static PubSubSource start(String emulatorHostPort, String subscription,
      Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink) {
    ProjectSubscriptionName name = ProjectSubscriptionName.parse(subscription);
    ManagedChannel channel = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    TransportChannelProvider channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try {
      String topic = topicOf(name, channels);
      Subscriber subscriber = Subscriber.newBuilder(name,
              (PubsubMessage message, AckReplyConsumer reply) -> sink
                  .apply(PubSubEvents.messagePublished(message, name.toString(), topic))
                  .whenComplete((outcome, failure) -> {
                    if (failure == null && outcome != DeliveryResult.Outcome.ABANDONED) {
                      reply.ack();
                    } else {
                      reply.nack();
                    }
                  }))
          .setChannelProvider(channels)
          .setCredentialsProvider(NoCredentialsProvider.create())
          .build();
      subscriber.startAsync().awaitRunning(30, TimeUnit.SECONDS);
      return new PubSubSource(channel, subscriber, name.toString(), topic);
    } catch (TimeoutException | RuntimeException e) {
      channel.shutdownNow();
      throw new IllegalStateException("could not pull " + subscription + " from the Pub/Sub emulator at "
          + emulatorHostPort + ": " + e.getMessage(), e);
    }
  }

  /** The topic the subscription is attached to: it is the CloudEvent's source. */
  private static String topicOf(ProjectSubscriptionName name, TransportChannelProvider channels) {
    try (SubscriptionAdminClient admin = SubscriptionAdminClient.create(SubscriptionAdminSettings.newBuilder()
        .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create()).build())) {
      return admin.getSubscription(name.toString()).getTopic();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String subscription() {
    return subscription;
  }

  public String topic() {
    return topic;
  }

  @Override
  public void close() {
    try {
      subscriber.stopAsync().awaitTerminated(10, TimeUnit.SECONDS);
    } catch (TimeoutException | IllegalStateException e) {
      // stopping is best effort; unacked messages go back to Pub/Sub either way
    } finally {
      channel.shutdownNow();
    }
  }
}
