import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.List;
import org.h2.mvstore.MVStore;

/**
 * Starts mongo-java-server, a MongoDB wire-protocol server, for development and tests.
 *
 * Usage: java -cp CLASSPATH Launcher.java HOST PORT [DATA_FILE]
 * With DATA_FILE the H2 MVStore backend keeps data across restarts; without it data lives in memory.
 * MVStore commits to its file in the background, by default once a second: a kill -9 lost the writes of
 * that last second, acknowledged ones included (an execution's result, written once, then never existed).
 * Committing every 10 ms shrinks that window to what a journal's group commit would allow.
 *
 * The oplog is enabled so change streams work. The server reports MongoDB 4.4 (wire version 9): the
 * Node.js driver 7.x refuses servers below wire version 9, and mongo-java-server's own newest constant
 * (MONGO_5_0) still reports wire version 8.
 */
public class Launcher {
    static final MongoVersion MONGO_4_4 = new MongoVersion() {
        public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
        public int getWireVersion() { return 9; }
    };

    static MVStore durableStore(String file) {
        MVStore store = new MVStore.Builder().fileName(file).open();
        store.setAutoCommitDelay(10);
        return store;
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
        MongoBackend backend = args.length > 2 ? new H2Backend(durableStore(args[2])) : new MemoryBackend();
        backend.version(MONGO_4_4);
        backend.enableOplog();
        MongoServer server = new MongoServer(backend);
        server.bind(host, port);
        System.out.println("mongo-java-server listening on " + host + ":" + port
                + (args.length > 2 ? " (data: " + args[2] + ")" : " (in memory)"));
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
        Thread.currentThread().join();
    }
}
