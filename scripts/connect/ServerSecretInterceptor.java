package sparkorchestrator.connect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
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
 *
 * <p>Local servers get the secret itself in a file; k8s servers only its SHA-256 (CONNECT_SERVER_SECRET_SHA256,
 * activities/adapters/k8s/connect-server.ts), and a caller's secret is hashed before the comparison.
 */
public final class ServerSecretInterceptor implements ServerInterceptor {
  static final Metadata.Key<String> HEADER =
      Metadata.Key.of("x-connect-server-secret", Metadata.ASCII_STRING_MARSHALLER);
  private static byte[] secret;
  private final byte[] expected;
  /** The pod was given the secret's SHA-256, not the secret: a caller's secret is hashed first. */
  private final boolean hashed;

  /**
   * The secret comes in a file (CONNECT_SERVER_SECRET_FILE), read once and deleted at once: the sessions' code
   * (Python UDFs, in workers of this server, as this user) could read an environment variable of this process
   * (its own, or /proc/<pid>/environ) and call other principals' sessions here around the gateway. The server
   * builds its interceptors when it starts, before any session exists.
   */
  private static synchronized byte[] secret() {
    if (secret != null) return secret;
    String file = System.getenv("CONNECT_SERVER_SECRET_FILE");
    if (file == null || file.isEmpty()) {
      throw new IllegalStateException("CONNECT_SERVER_SECRET_FILE is not set: this server would accept any caller");
    }
    Path p = Paths.get(file);
    try {
      String s = new String(Files.readAllBytes(p), StandardCharsets.US_ASCII).trim();
      Files.delete(p);
      if (s.isEmpty()) throw new IllegalStateException("the Connect server's secret file is empty");
      secret = s.getBytes(StandardCharsets.US_ASCII);
      return secret;
    } catch (IOException e) {
      throw new IllegalStateException("the Connect server's secret file cannot be read: " + e.getMessage(), e);
    }
  }

  public ServerSecretInterceptor() {
    String sha256 = System.getenv("CONNECT_SERVER_SECRET_SHA256");
    hashed = sha256 != null && !sha256.isEmpty();
    expected = hashed ? hex(sha256) : secret();
  }

  private static byte[] hex(String s) {
    if (!s.matches("[0-9a-fA-F]{64}")) {
      throw new IllegalStateException("CONNECT_SERVER_SECRET_SHA256 is not a hex SHA-256");
    }
    byte[] out = new byte[32];
    for (int i = 0; i < 32; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return out;
  }

  private byte[] presented(String got) {
    byte[] b = got.getBytes(StandardCharsets.US_ASCII);
    if (!hashed) return b;
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String got = headers.get(HEADER);
    if (got == null || !MessageDigest.isEqual(expected, presented(got))) {
      call.close(
          Status.UNAUTHENTICATED.withDescription("this Spark Connect server takes calls only through the gateway"),
          new Metadata());
      return new ServerCall.Listener<Q>() {};
    }
    return next.startCall(call, headers);
  }
}
