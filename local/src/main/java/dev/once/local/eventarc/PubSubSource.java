package dev.once.local.eventarc;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.stub.GrpcSubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStubSettings;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.ProjectSubscriptionName;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.PullResponse;
import com.google.pubsub.v1.ReceivedMessage;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Pulls one subscription on the Pub/Sub emulator with the real client and hands each message to the relay as a
 * {@code messagePublished} CloudEvent. A message is acked only once its delivery ended (delivered, or given up
 * and counted); while the relay retries, its ack deadline is extended; if the relay stops first, the message is
 * nacked, so Pub/Sub redelivers it.
 *
 * <p>Synchronous pull, not the streaming client: the Cloud SDK's emulator fails on a reset stream
 * ({@code NoSuchMethodError} in {@code onRstStreamRead}), and the streaming client, which closes streams that
 * have been quiet for 20 seconds, then stops receiving messages for minutes.
 */
public final class PubSubSource implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(PubSubSource.class.getName());
  private static final int BATCH = 100;
  private static final int ACK_DEADLINE_SECONDS = 60;
  private static final long EXTEND_EVERY_MILLIS = 20_000;
  private static final long IDLE_WAIT_MILLIS = 100;

  private final ManagedChannel channel;
  private final SubscriberStub subscriber;
  private final String subscription;
  private final String topic;
  private final Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink;
  private final Set<String> outstanding = ConcurrentHashMap.newKeySet();
  private final Thread puller;
  private volatile boolean closed;

  private PubSubSource(ManagedChannel channel, SubscriberStub subscriber, String subscription, String topic,
      Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink) {
    this.channel = channel;
    this.subscriber = subscriber;
    this.subscription = subscription;
    this.topic = topic;
    this.sink = sink;
    this.puller = Thread.ofPlatform().daemon().name("pubsub-source-" + subscription).unstarted(this::pullLoop);
  }

  static PubSubSource start(String emulatorHostPort, String subscription,
      Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink) {
    ProjectSubscriptionName name = ProjectSubscriptionName.parse(subscription);
    ManagedChannel channel = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    TransportChannelProvider channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try {
      String topic = topicOf(name, channels);
      SubscriberStub stub = GrpcSubscriberStub.create(SubscriberStubSettings.newBuilder()
          .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create()).build());
      PubSubSource source = new PubSubSource(channel, stub, name.toString(), topic, sink);
      source.puller.start();
      return source;
    } catch (IOException | RuntimeException e) {
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

  private void pullLoop() {
    long nextExtension = System.currentTimeMillis() + EXTEND_EVERY_MILLIS;
    while (!closed) {
      try {
        PullResponse response = subscriber.pullCallable().call(PullRequest.newBuilder()
            .setSubscription(subscription).setMaxMessages(BATCH).setReturnImmediately(true).build());
        for (ReceivedMessage received : response.getReceivedMessagesList()) {
          deliver(received);
        }
        if (System.currentTimeMillis() >= nextExtension) {
          extendOutstanding();
          nextExtension = System.currentTimeMillis() + EXTEND_EVERY_MILLIS;
        }
        if (response.getReceivedMessagesCount() == 0) {
          TimeUnit.MILLISECONDS.sleep(IDLE_WAIT_MILLIS);
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.log(Level.WARNING, "pulling " + subscription + " failed; trying again", e);
          try {
            TimeUnit.MILLISECONDS.sleep(500);
          } catch (InterruptedException interrupted) {
            return;
          }
        }
      }
    }
  }

  private void deliver(ReceivedMessage received) {
    String ackId = received.getAckId();
    outstanding.add(ackId);
    sink.apply(PubSubEvents.messagePublished(received.getMessage(), subscription, topic))
        .whenComplete((outcome, failure) -> {
          outstanding.remove(ackId);
          if (closed) {
            return;
          }
          if (failure == null && outcome != DeliveryResult.Outcome.ABANDONED) {
            acknowledge(ackId);
          } else {
            setDeadline(List.of(ackId), 0); // nack: Pub/Sub redelivers it
          }
        });
  }

  private void acknowledge(String ackId) {
    try {
      subscriber.acknowledgeCallable().call(
          AcknowledgeRequest.newBuilder().setSubscription(subscription).addAckIds(ackId).build());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "acknowledging a message of " + subscription + " failed; it will come again", e);
    }
  }

  /** A delivery the relay is still retrying keeps its message: its deadline moves on. */
  private void extendOutstanding() {
    if (!outstanding.isEmpty()) {
      setDeadline(List.copyOf(outstanding), ACK_DEADLINE_SECONDS);
    }
  }

  private void setDeadline(List<String> ackIds, int seconds) {
    try {
      subscriber.modifyAckDeadlineCallable().call(ModifyAckDeadlineRequest.newBuilder()
          .setSubscription(subscription).addAllAckIds(ackIds).setAckDeadlineSeconds(seconds).build());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "changing the ack deadline of " + subscription + " failed", e);
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
    closed = true;
    puller.interrupt();
    try {
      puller.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!outstanding.isEmpty()) {
      setDeadline(List.copyOf(outstanding), 0); // unfinished deliveries go back to Pub/Sub
    }
    subscriber.close();
    channel.shutdownNow();
  }
}
