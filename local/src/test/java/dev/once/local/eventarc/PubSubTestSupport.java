package dev.once.local.eventarc;

import com.google.api.core.ApiFuture;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.cloud.pubsub.v1.stub.GrpcSubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStubSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.PushConfig;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Topics, subscriptions and publishing on the Pub/Sub emulator with the real client (no credentials). */
final class PubSubTestSupport implements AutoCloseable {
  private final ManagedChannel channel;
  private final TransportChannelProvider channels;

  PubSubTestSupport(String emulatorHostPort) {
    channel = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
  }

  void createTopicAndSubscription(String project, String topic, String subscription) throws Exception {
    try (TopicAdminClient topics = TopicAdminClient.create(TopicAdminSettings.newBuilder()
        .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create()).build());
        SubscriptionAdminClient subscriptions = SubscriptionAdminClient.create(SubscriptionAdminSettings.newBuilder()
            .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create()).build())) {
      topics.createTopic(TopicName.of(project, topic));
      subscriptions.createSubscription(SubscriptionName.of(project, subscription), TopicName.of(project, topic),
          PushConfig.getDefaultInstance(), 10);
    }
  }

  /** Publishes one message and returns its message id. */
  String publish(String project, String topic, String data, Map<String, String> attributes) throws Exception {
    Publisher publisher = Publisher.newBuilder(TopicName.of(project, topic)).setChannelProvider(channels)
        .setCredentialsProvider(NoCredentialsProvider.create()).build();
    try {
      ApiFuture<String> id = publisher.publish(PubsubMessage.newBuilder()
          .setData(ByteString.copyFromUtf8(data)).putAllAttributes(attributes).build());
      return id.get(30, TimeUnit.SECONDS);
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** Pulls whatever is deliverable right now (without acking it): nothing, once every message was acked. */
  @SuppressWarnings("deprecation") // returnImmediately is deprecated, but it is how to ask "what is there now"
  int pullNow(String project, String subscription) throws Exception {
    try (SubscriberStub stub = GrpcSubscriberStub.create(SubscriberStubSettings.newBuilder()
        .setTransportChannelProvider(channels).setCredentialsProvider(NoCredentialsProvider.create()).build())) {
      return stub.pullCallable().call(PullRequest.newBuilder()
          .setSubscription(SubscriptionName.of(project, subscription).toString())
          .setMaxMessages(10).setReturnImmediately(true).build()).getReceivedMessagesCount();
    }
  }

  @Override
  public void close() {
    channel.shutdownNow();
  }
}
