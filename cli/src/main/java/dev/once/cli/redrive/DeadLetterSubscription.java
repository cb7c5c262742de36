package dev.once.cli.redrive;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.cloud.pubsub.v1.stub.GrpcSubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStub;
import com.google.cloud.pubsub.v1.stub.SubscriberStubSettings;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import dev.once.cli.Failure;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * The subscription that holds dead letters, read without acknowledging: a message is acknowledged only after it was
 * re-driven, so a failure (or a crash of this tool) leaves it there for the next try. Every call bounded.
 */
final class DeadLetterSubscription implements AutoCloseable {
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
  /** How long a pulled message stays ours while it is re-driven one by one. */
  static final int HOLD_SECONDS = 600;

  private final String subscription;
  private final boolean emulator;
  private final ManagedChannel channel;
  private final SubscriberStub stub;

  /** @param emulatorHost the Pub/Sub emulator's host:port, or null for Google's service (application default credentials) */
  DeadLetterSubscription(String subscription, String emulatorHost) {
    this.subscription = subscription;
    this.emulator = emulatorHost != null;
    try {
      SubscriberStubSettings.Builder settings = SubscriberStubSettings.newBuilder();
      if (emulator) {
        channel = ManagedChannelBuilder.forTarget(emulatorHost).usePlaintext().build();
        settings.setTransportChannelProvider(FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel)))
            .setCredentialsProvider(NoCredentialsProvider.create());
      } else {
        channel = null;
      }
      settings.pullSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      settings.acknowledgeSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      settings.modifyAckDeadlineSettings().setSimpleTimeoutNoRetriesDuration(CALL_TIMEOUT);
      stub = GrpcSubscriberStub.create(settings.build());
    } catch (IOException | RuntimeException e) {
      throw Failure.remote("cannot connect to Pub/Sub for " + subscription + ": " + Failure.reason(e), e);
    }
  }

  /** Up to {@code max} messages, held for {@link #HOLD_SECONDS} while they are re-driven. */
  List<ReceivedMessage> pull(int max) {
    List<ReceivedMessage> received;
    try {
      // The emulator answers at once; Google's service may wait for messages, up to the call's deadline.
      received = stub.pullCallable().call(PullRequest.newBuilder().setSubscription(subscription)
          .setMaxMessages(max).setReturnImmediately(emulator).build()).getReceivedMessagesList();
    } catch (DeadlineExceededException e) {
      return List.of(); // nothing arrived while we waited
    } catch (RuntimeException e) {
      throw Failure.remote("could not pull from " + subscription + ": " + Failure.reason(e), e);
    }
    if (!received.isEmpty()) {
      modifyDeadline(received.stream().map(ReceivedMessage::getAckId).toList(), HOLD_SECONDS);
    }
    return received;
  }

  void acknowledge(String ackId) {
    try {
      stub.acknowledgeCallable()
          .call(AcknowledgeRequest.newBuilder().setSubscription(subscription).addAckIds(ackId).build());
    } catch (RuntimeException e) {
      throw Failure.remote("re-driven, but the dead letter could not be acknowledged (it comes back, and a second"
          + " re-drive is absorbed by the ledger): " + Failure.reason(e), e);
    }
  }

  /** Hands messages back at once (a listing, or ones left for later). */
  void giveBack(List<String> ackIds) {
    if (!ackIds.isEmpty()) {
      modifyDeadline(ackIds, 0);
    }
  }

  private void modifyDeadline(List<String> ackIds, int seconds) {
    try {
      stub.modifyAckDeadlineCallable().call(ModifyAckDeadlineRequest.newBuilder().setSubscription(subscription)
          .addAllAckIds(ackIds).setAckDeadlineSeconds(seconds).build());
    } catch (RuntimeException e) {
      throw Failure.remote("could not change the ack deadline on " + subscription + ": " + Failure.reason(e), e);
    }
  }

  @Override
  public void close() {
    stub.close();
    if (channel != null) {
      channel.shutdownNow();
    }
  }
}
