package dev.once.local.eventarc;

import com.google.api.core.ApiFuture;
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
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.PullResponse;
import com.google.pubsub.v1.ReceivedMessage;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.eventarc.PubSubEvents;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Pulls one subscription on the Pub/Sub emulator with the real client and hands each message to the relay as a
 * {@code messagePublished} CloudEvent. A message is acked only once its delivery ended (delivered, or given up
 * and counted); if the relay stops first it is nacked, so Pub/Sub redelivers it.
 *
 * <p>Synchronous pulls, not the client's streaming {@code Subscriber}: the client pings a streaming pull every 30 s
 * and closes it when the ping goes unanswered, and the Cloud SDK's emulator before 0.8.32 never answers, so an idle
 * stream is torn down about every 20 s; a message the emulator hands to a stream as it closes only comes back after
 * its ack deadline, a minute or two later. A long-running relay (dev/run) then delivered results minutes late.
 * Pulls have no stream to lose. While a delivery runs (retries can take minutes), its ack deadline is extended.
 */
public final class PubSubSource implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(PubSubSource.class.getName());
  private static final int MAX_MESSAGES = 100;
  /** How long one pull may wait for messages; the emulator answers at once when there are some. */
  private static final Duration PULL_TIMEOUT = Duration.ofSeconds(20);
  /** An empty answer (the emulator does not always hold a pull open) is followed by a short pause. */
  private static final Duration IDLE_PAUSE = Duration.ofMillis(100);
  /** Deadlines are pushed 30 s out every 3 s: well inside even the shortest subscription deadline (10 s). */
  private static final int DEADLINE_SECONDS = 30;
  private static final Duration EXTEND_EVERY = Duration.ofSeconds(3);

  private final ManagedChannel channel;
  private final SubscriberStub stub;
  private final String subscription;
  private final String topic;
  private final Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink;
  /** Ack ids of messages whose delivery has not ended: their deadlines are extended. */
  private final Set<String> outstanding = ConcurrentHashMap.newKeySet();
  /** Acks and nacks sent and not yet answered, which closing waits for. */
  private final Set<ApiFuture<?>> settling = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService extender = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "pubsub-extend");
    t.setDaemon(true);
    return t;
  });
  private final Thread puller;
  private volatile boolean running = true;

  private PubSubSource(ManagedChannel channel, SubscriberStub stub, String subscription, String topic,
      Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink) {
    this.channel = channel;
    this.stub = stub;
    this.subscription = subscription;
    this.topic = topic;
    this.sink = sink;
    this.puller = new Thread(this::pullLoop, "pubsub-pull " + subscription);
    this.puller.setDaemon(true);
  }

  static PubSubSource start(String emulatorHostPort, String subscription,
      Function<CloudEvent, CompletableFuture<DeliveryResult.Outcome>> sink) {
    ProjectSubscriptionName name = ProjectSubscriptionName.parse(subscription);
    ManagedChannel channel = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    TransportChannelProvider channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try {
      String topic = topicOf(name, channels);
      SubscriberStubSettings.Builder settings = SubscriberStubSettings.newBuilder()
          .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create());
      settings.pullSettings().setSimpleTimeoutNoRetriesDuration(PULL_TIMEOUT);
      settings.acknowledgeSettings().setSimpleTimeoutNoRetriesDuration(Duration.ofSeconds(10));
      settings.modifyAckDeadlineSettings().setSimpleTimeoutNoRetriesDuration(Duration.ofSeconds(10));
      PubSubSource source = new PubSubSource(channel, GrpcSubscriberStub.create(settings.build()), name.toString(),
          topic, sink);
      source.puller.start();
      source.extender.scheduleWithFixedDelay(source::extendDeadlines, EXTEND_EVERY.toMillis(),
          EXTEND_EVERY.toMillis(), TimeUnit.MILLISECONDS);
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

  @SuppressWarnings("deprecation") // returnImmediately=false: the pull may wait for messages instead of spinning
  private void pullLoop() {
    PullRequest request = PullRequest.newBuilder().setSubscription(subscription).setMaxMessages(MAX_MESSAGES)
        .setReturnImmediately(false).build();
    while (running) {
      List<ReceivedMessage> messages;
      try {
        PullResponse response = stub.pullCallable().call(request);
        messages = response.getReceivedMessagesList();
      } catch (RuntimeException e) {
        if (!running) {
          return;
        }
        // DEADLINE_EXCEEDED is an empty long poll; anything else (the emulator restarting) is retried.
        messages = List.of();
      }
      for (ReceivedMessage received : messages) {
        dispatch(received);
      }
      if (messages.isEmpty() && !pause()) {
        return;
      }
    }
  }

  /** The CloudEvent Eventarc makes of a message it pulled ({@link PubSubEvents}, given the message's fields). */
  static CloudEvent event(PubsubMessage message, String subscription, String topic) {
    Instant published =
        Instant.ofEpochSecond(message.getPublishTime().getSeconds(), message.getPublishTime().getNanos());
    return PubSubEvents.messagePublished(message.getMessageId(), message.getAttributesMap(),
        message.getData().toByteArray(), message.getOrderingKey(), published, subscription, topic);
  }

  private void dispatch(ReceivedMessage received) {
    String ackId = received.getAckId();
    outstanding.add(ackId);
    CompletableFuture<DeliveryResult.Outcome> delivery;
    try {
      delivery = sink.apply(event(received.getMessage(), subscription, topic));
    } catch (RuntimeException e) {
      delivery = CompletableFuture.failedFuture(e);
    }
    delivery.whenComplete((outcome, failure) -> {
      outstanding.remove(ackId);
      boolean ended = failure == null && outcome != DeliveryResult.Outcome.ABANDONED;
      settle(ackId, ended);
    });
  }

  /**
   * Ack after a delivery ended; nack (deadline 0) when it was abandoned, so Pub/Sub redelivers at once. Sent without
   * blocking: an abandoned delivery ends on an interrupted thread, where a blocking call would fail.
   */
  private void settle(String ackId, boolean ack) {
    ApiFuture<?> sent;
    try {
      sent = ack
          ? stub.acknowledgeCallable().futureCall(AcknowledgeRequest.newBuilder().setSubscription(subscription)
              .addAckIds(ackId).build())
          : stub.modifyAckDeadlineCallable().futureCall(ModifyAckDeadlineRequest.newBuilder()
              .setSubscription(subscription).addAckIds(ackId).setAckDeadlineSeconds(0).build());
    } catch (RuntimeException e) {
      // The message comes back after its deadline: a duplicate delivery, which the functions absorb.
      LOG.log(Level.FINE, "could not " + (ack ? "ack" : "nack") + " a message of " + subscription, e);
      return;
    }
    settling.add(sent);
    sent.addListener(() -> settling.remove(sent), Runnable::run);
  }

  private void extendDeadlines() {
    List<String> ackIds = List.copyOf(outstanding);
    if (ackIds.isEmpty() || !running) {
      return;
    }
    try {
      modify(ackIds, DEADLINE_SECONDS);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "could not extend the deadlines of " + ackIds.size() + " messages of " + subscription, e);
    }
  }

  private void modify(List<String> ackIds, int seconds) {
    stub.modifyAckDeadlineCallable().call(ModifyAckDeadlineRequest.newBuilder().setSubscription(subscription)
        .addAllAckIds(ackIds).setAckDeadlineSeconds(seconds).build());
  }

  /** Waits (briefly) until the acks and nacks already sent have been answered. */
  private void awaitSettled(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ApiFuture<?> sent : List.copyOf(settling)) {
      try {
        sent.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException | TimeoutException e) {
        // that message comes back after its deadline
      }
    }
  }

  private boolean pause() {
    try {
      Thread.sleep(IDLE_PAUSE);
      return true;
    } catch (InterruptedException e) {
      return false;
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
    running = false;
    extender.shutdownNow();
    puller.interrupt();
    // The relay abandons its deliveries before closing its sources, so their nacks are on the way: let them
    // arrive. A message still out after that comes back when its deadline runs out.
    awaitSettled(Duration.ofSeconds(5));
    channel.shutdownNow(); // also ends a pull that is waiting for messages
    try {
      puller.join(TimeUnit.SECONDS.toMillis(5));
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      stub.close();
    }
  }
}
