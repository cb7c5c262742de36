package dev.once.local.net;

import dev.once.local.Bounds;
import dev.once.local.http.AmbiguousFailure;
import dev.once.wire.net.TcpProxy;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An emulator's gRPC as clients reach it ({@link #hostPort()}), whose answers can be lost after the emulator carried
 * the call out: a {@link TcpProxy} in front of a gRPC server that relays every call, as bytes and as it streams, to
 * the emulator. A call of a method the {@link Faults} watch (a unary one: a Pub/Sub publish, a Firestore commit) has
 * its answer held until the emulator closed it; when the emulator carried it out, the faults may fail it as an
 * {@link AmbiguousFailure} says: its answer sent after a delay (past the client's deadline), the client's
 * connection reset (by the TCP proxy in front), or a 5xx as the gRPC code Google's error model gives it
 * (https://cloud.google.com/apis/design/errors: 500 INTERNAL, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED). A proxy at
 * this level can pick one call among the many a client multiplexes on its connection and fail it alone, which a TCP
 * proxy cannot without breaking HTTP/2's header compression.
 */
public final class GrpcProxy implements AutoCloseable {
  private static final Duration UPSTREAM_HANG_GUARD = Bounds.PATIENT;

  /** Which calls may lose their answer, and how. */
  public interface Faults {
    /** Whether calls of {@code method} (its full name) are watched; they must be unary. */
    boolean watches(String method);

    /** A watched call the emulator carried out (answered OK): the failure its answer meets, or none. */
    Optional<AmbiguousFailure> carriedOut(String method, byte[] request);
  }

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
  private final Faults faults;
  private final Server server;
  private final TcpProxy front;
  private final ScheduledExecutorService late = Executors.newSingleThreadScheduledExecutor(
      Thread.ofPlatform().daemon().name("grpc-proxy-late").factory());

  private GrpcProxy(String emulatorHostPort, Faults faults) {
    this.emulator = ManagedChannelBuilder.forTarget(emulatorHostPort).usePlaintext().build();
    this.faults = faults;
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
          .fallbackHandlerRegistry(new Relaying())
          .build()
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start a gRPC proxy to " + emulatorHostPort, e);
    }
    front = TcpProxy.start("127.0.0.1:" + server.getPort());
  }

  public static GrpcProxy start(String emulatorHostPort, Faults faults) {
    return new GrpcProxy(emulatorHostPort, faults);
  }

  /** Where clients reach the emulator. */
  public String hostPort() {
    return front.hostPort();
  }

  /** Every method is relayed as bytes; its type does not matter on the wire. */
  private final class Relaying extends HandlerRegistry {
    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
      MethodDescriptor<byte[], byte[]> method = MethodDescriptor.newBuilder(BYTES, BYTES)
          .setFullMethodName(methodName).setType(MethodDescriptor.MethodType.BIDI_STREAMING).build();
      return ServerMethodDefinition.create(method, GrpcProxy.this::relay);
    }
  }

  private ServerCall.Listener<byte[]> relay(ServerCall<byte[], byte[]> call, Metadata headers) {
    String method = call.getMethodDescriptor().getFullMethodName();
    boolean watched = faults.watches(method);
    SocketAddress client = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    // Made outside the client's context, which its cancellation (its connection reset by another call's fault)
    // would carry over to the emulator: only an unwatched call is cancelled with its client (onCancel below).
    Context previous = Context.ROOT.attach();
    ClientCall<byte[], byte[]> upstream;
    try {
      // The proxy's own bound is a hang guard only: the client's deadline decides when a call fails. A fixed 30 s here
      // turned a loaded emulator's slow answer into a DEADLINE_EXCEEDED no test had injected (an ambiguous commit,
      // an extra try the matrices would count).
      upstream = emulator.newCall(call.getMethodDescriptor(),
          CallOptions.DEFAULT.withDeadlineAfter(UPSTREAM_HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    } finally {
      Context.ROOT.detach(previous);
    }
    List<byte[]> requests = Collections.synchronizedList(new ArrayList<>()); // filled and read on two threads
    upstream.start(new ClientCall.Listener<>() {
      private Metadata answerHeaders = new Metadata();
      private final List<byte[]> answers = new ArrayList<>();

      @Override
      public void onHeaders(Metadata received) {
        if (watched) {
          answerHeaders = received;
        } else {
          call.sendHeaders(received);
        }
      }

      @Override
      public void onMessage(byte[] answer) {
        if (watched) {
          answers.add(answer);
        } else {
          call.sendMessage(answer);
        }
        upstream.request(1);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        Optional<AmbiguousFailure> failure = watched && status.isOk() && requests.size() == 1
            ? faults.carriedOut(method, requests.get(0)) : Optional.empty();
        Runnable answer = () -> answer(call, watched ? answerHeaders : null, answers, status, trailers);
        if (failure.isEmpty()) {
          answer.run();
          return;
        }
        switch (failure.get()) {
          case AmbiguousFailure.Late held -> late.schedule(answer, held.delay().toMillis(), TimeUnit.MILLISECONDS);
          case AmbiguousFailure.Reset reset -> front.resetConnectionFrom((InetSocketAddress) client);
          case AmbiguousFailure.ServerError error -> answer(call, null, List.of(), statusOf(error.status())
              .withDescription("injected: " + method + " was carried out, then the service failed"), new Metadata());
        }
      }
    }, headers);
    upstream.request(1);
    call.request(1);
    return new ServerCall.Listener<>() {
      @Override
      public void onMessage(byte[] request) {
        requests.add(request);
        upstream.sendMessage(request);
        call.request(1);
      }

      @Override
      public void onHalfClose() {
        upstream.halfClose();
      }

      @Override
      public void onCancel() {
        // A watched call is carried out even when its client has gone (its connection reset meanwhile, by another
        // call's fault): as a server that got the request would, and so that every call a fault picks meets it.
        if (!watched) {
          upstream.cancel("the client cancelled", null);
        }
      }
    };
  }

  /** A late answer is sent if the client still waits; it has usually given up (its deadline passed). */
  private static void answer(ServerCall<byte[], byte[]> call, Metadata headers, List<byte[]> answers, Status status,
      Metadata trailers) {
    try {
      if (headers != null && status.isOk()) {
        call.sendHeaders(headers);
      }
      answers.forEach(call::sendMessage);
      call.close(status, trailers);
    } catch (RuntimeException clientGone) {
      // cancelled by the client: the answer is lost, which is the point of a late one
    }
  }

  /** The gRPC code of an HTTP 5xx in Google's error model. */
  private static Status statusOf(int httpStatus) {
    return switch (httpStatus) {
      case 503 -> Status.UNAVAILABLE;
      case 504 -> Status.DEADLINE_EXCEEDED;
      default -> Status.INTERNAL;
    };
  }

  @Override
  public void close() {
    front.close();
    server.shutdownNow();
    emulator.shutdownNow();
    late.shutdownNow();
  }
}
