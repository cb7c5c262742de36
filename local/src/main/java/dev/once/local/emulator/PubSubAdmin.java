package dev.once.local.emulator;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.cloud.pubsub.v1.stub.GrpcSubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStubSettings;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.PullResponse;
import com.google.pubsub.v1.PushConfig;
import com.google.pubsub.v1.ReceivedMessage;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Topics, subscriptions and synchronous pulls on the Pub/Sub emulator, with the real client; every call bounded
 * by a deadline, so a stuck emulator is an error and not a hang.
 */
public final class PubSubAdmin implements AutoCloseable {
  /**
   * Far above what a call takes (milliseconds): an emulator that has just started, while test JVMs side by side
   * start theirs and their stacks on a loaded machine, took more than 20 s for its first topic.
   */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

  private final ManagedChannel channel;
  private final TopicAdminClient topics;
  private final SubscriptionAdminClient subscriptions;
  private final SubscriberStub subscriber;

  public PubSubAdmin(String emulatorHost) {
    channel = ManagedChannelBuilder.forTarget(emulatorHost).usePlaintext().build();
    TransportChannelProvider channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try {
      TopicAdminSettings.Builder topicSettings = TopicAdminSettings.newBuilder()
          .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create());
      topicSettings.createTopicSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      topics = TopicAdminClient.create(topicSettings.build());
      SubscriptionAdminSettings.Builder subscriptionSettings = SubscriptionAdminSettings.newBuilder()
          .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create());
      subscriptionSettings.createSubscriptionSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      subscriptions = SubscriptionAdminClient.create(subscriptionSettings.build());
      SubscriberStubSettings.Builder pullSettings = SubscriberStubSettings.newBuilder()
          .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create());
      pullSettings.pullSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      pullSettings.acknowledgeSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      subscriber = GrpcSubscriberStub.create(pullSettings.build());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public void createTopic(String topic) {
    topics.createTopic(topic);
  }

  /** A pull subscription; its readers extend the deadline of what they hold longer than a minute. */
  public void createSubscription(String subscription, String topic) {
    subscriptions.createSubscription(subscription, topic, PushConfig.getDefaultInstance(), 60);
  }

  /** Pulls and acknowledges whatever the subscription holds right now. */
  public List<PubsubMessage> pull(String subscription) {
    List<PubsubMessage> messages = new ArrayList<>();
    PullResponse response = subscriber.pullCallable().call(
        PullRequest.newBuilder().setSubscription(subscription).setMaxMessages(1000).setReturnImmediately(true).build());
    List<String> ackIds = new ArrayList<>();
    for (ReceivedMessage received : response.getReceivedMessagesList()) {
      messages.add(received.getMessage());
      ackIds.add(received.getAckId());
    }
    if (!ackIds.isEmpty()) {
      subscriber.acknowledgeCallable().call(
          AcknowledgeRequest.newBuilder().setSubscription(subscription).addAllAckIds(ackIds).build());
    }
    return messages;
  }

  @Override
  public void close() {
    subscriber.close();
    subscriptions.close();
    topics.close();
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
