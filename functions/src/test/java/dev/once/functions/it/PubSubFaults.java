package dev.once.functions.it;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.pubsub.v1.PublishRequest;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.net.TcpProxy;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Pub/Sub emulator as the functions reach it ({@link #hostPort()}, their {@code PUBSUB_EMULATOR_HOST}), with
 * publishes that are carried out and then fail: a TCP proxy in front of a gRPC proxy that forwards every unary call
 * (what a {@code Publisher} makes) to the emulator. {@link #failFirstPublishOf} makes the first publish of each key
 * under a prefix fail once the emulator has stored the message, as an {@link AmbiguousFailure} says: its answer sent
 * after a delay past the client's deadline, the client's connection reset (by the TCP proxy), or INTERNAL — the gRPC
 * code of a 500 in Google's error model (https://cloud.google.com/apis/design/errors). Counts, per
 * {@code idempotency_key}, the publishes the emulator carried out and those failed on purpose.
 */
final class PubSubFaults implements AutoCloseable {
  static final String PUBLISH = "google.pubsub.v1.Publisher/Publish";
  private static final Context.Key<SocketAddress> CLIENT = Context.key("client");
  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };

  private final ManagedChannel emulator;
  private final Server server;
  private final TcpProxy front;
  private final ScheduledExecutorService late = Executors.newSingleThreadScheduledExecutor();
  private final Map<String, AmbiguousFailure> armed = new ConcurrentHashMap<>();
  private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();
  private final Map<String, AtomicInteger> carriedOut = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> failed = new ConcurrentHashMap<>();

  private PubSubFaults(String emulatorHostPort) {
    emulator = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    ServerInterceptor whoCalls = new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
          ServerCallHandler<Q, A> next) {
        SocketAddress client = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        return Contexts.interceptCall(Context.current().withValue(CLIENT, client), call, headers, next);
      }
    };
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
          .fallbackHandlerRegistry(new Forwarding())
          .intercept(whoCalls)
          .build()
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the Pub/Sub fault proxy", e);
    }
    front = TcpProxy.start("127.0.0.1:" + server.getPort());
  }

  static PubSubFaults start(String emulatorHostPort) {
    return new PubSubFaults(emulatorHostPort);
  }

  /** Where the functions reach Pub/Sub. */
  String hostPort() {
    return front.hostPort();
  }

  /** From now on, the first publish of each key starting with {@code keyPrefix} fails as {@code failure} says. */
  void failFirstPublishOf(String keyPrefix, AmbiguousFailure failure) {
    armed.put(keyPrefix, failure);
  }

  /** Publishes of {@code key} the emulator carried out (each a message on the topic). */
  int carriedOut(String key) {
    return carriedOut.getOrDefault(key, new AtomicInteger()).get();
  }

  /** Publishes of {@code key} carried out, then failed on purpose. */
  int failed(String key) {
    return failed.getOrDefault(key, new AtomicInteger()).get();
  }

  /** Every method is forwarded as bytes, as a unary call. */
  private final class Forwarding extends HandlerRegistry {
    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
      MethodDescriptor<byte[], byte[]> method = MethodDescriptor.newBuilder(BYTES, BYTES)
          .setFullMethodName(methodName).setType(MethodDescriptor.MethodType.UNARY).build();
      return ServerMethodDefinition.create(method, ServerCalls.asyncUnaryCall(
          (request, answer) -> forward(method, request, (ServerCallStreamObserver<byte[]>) answer)));
    }
  }

  private void forward(MethodDescriptor<byte[], byte[]> method, byte[] request,
      ServerCallStreamObserver<byte[]> answer) {
    SocketAddress client = CLIENT.get();
    Optional<String> key = method.getFullMethodName().equals(PUBLISH) ? keyOf(request) : Optional.empty();
    Futures.addCallback(ClientCalls.futureUnaryCall(emulator.newCall(method, CallOptions.DEFAULT
        .withDeadlineAfter(30, TimeUnit.SECONDS)), request), new FutureCallback<>() {
          @Override
          public void onSuccess(byte[] reply) {
            key.ifPresent(k -> carriedOut.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet());
            Optional<AmbiguousFailure> failure = key.flatMap(PubSubFaults.this::failureFor);
            if (failure.isEmpty()) {
              answer(answer, reply);
              return;
            }
            failed.computeIfAbsent(key.get(), x -> new AtomicInteger()).incrementAndGet();
            switch (failure.get()) {
              case AmbiguousFailure.Late held ->
                  late.schedule(() -> answer(answer, reply), held.delay().toMillis(), TimeUnit.MILLISECONDS);
              case AmbiguousFailure.Reset reset -> front.resetConnectionFrom((InetSocketAddress) client);
              case AmbiguousFailure.ServerError error -> answer.onError(Status.INTERNAL
                  .withDescription("injected: the message was stored, then the service failed").asRuntimeException());
            }
          }

          @Override
          public void onFailure(Throwable error) {
            answer.onError(Status.fromThrowable(error).asRuntimeException());
          }
        }, MoreExecutors.directExecutor());
  }

  /** The failure armed for the first publish of {@code key}, taken once. */
  private Optional<AmbiguousFailure> failureFor(String key) {
    return armed.entrySet().stream().filter(e -> key.startsWith(e.getKey())).map(Map.Entry::getValue).findFirst()
        .filter(failure -> failedOnce.add(key));
  }

  /** A late answer is sent if the client still waits; it has usually given up (its deadline passed). */
  private static void answer(StreamObserver<byte[]> answer, byte[] reply) {
    try {
      answer.onNext(reply);
      answer.onCompleted();
    } catch (RuntimeException clientGone) {
      // cancelled by the client: the answer is lost, which is the point of a late one
    }
  }

  private static Optional<String> keyOf(byte[] request) {
    try {
      return PublishRequest.parseFrom(request).getMessagesList().stream().map(PubsubMessage::getAttributesMap)
          .map(attributes -> attributes.get("idempotency_key")).filter(java.util.Objects::nonNull).findFirst();
    } catch (InvalidProtocolBufferException e) {
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    front.close();
    server.shutdownNow();
    emulator.shutdownNow();
    late.shutdownNow();
  }
}
