package sparkorchestrator.connect;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;
import org.sparkproject.connect.grpc.Status;

/**
 * Loaded by a Spark Connect 3.5 server through spark.connect.grpc.interceptor.classes (its gRPC classes are
 * shaded under org.sparkproject.connect). Spark 3.5 binds every interface and has no address setting, so the
 * server itself refuses any call that lacks the per-server secret only the gateway adds: a process on this
 * host or the network cannot reach a session around the gateway's authentication.
 */
public final class ServerSecretInterceptor implements ServerInterceptor {
  static final Metadata.Key<String> HEADER =
      Metadata.Key.of("x-connect-server-secret", Metadata.ASCII_STRING_MARSHALLER);
  private final byte[] expected;

  public ServerSecretInterceptor() {
    String secret = System.getenv("CONNECT_SERVER_SECRET");
    if (secret == null || secret.isEmpty()) {
      throw new IllegalStateException("CONNECT_SERVER_SECRET is not set: this server would accept any caller");
    }
    expected = secret.getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String got = headers.get(HEADER);
    if (got == null || !MessageDigest.isEqual(expected, got.getBytes(StandardCharsets.US_ASCII))) {
      call.close(
          Status.UNAUTHENTICATED.withDescription("this Spark Connect server takes calls only through the gateway"),
          new Metadata());
      return new ServerCall.Listener<Q>() {};
    }
    return next.startCall(call, headers);
  }
}
