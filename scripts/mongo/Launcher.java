import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.AbstractCursor;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireMessageEncoder;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.h2.mvstore.FileStore;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreTool;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.RandomAccessStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;
import de.bwaldvogel.mongo.bson.BinData;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;

/**
 * Starts mongo-java-server, a MongoDB wire-protocol server, for development and tests.
 *
 * Usage: java -cp CLASSPATH Launcher.java HOST PORT [DATA_FILE]
 * With DATA_FILE the H2 MVStore backend keeps data across restarts; without it data lives in memory.
 * It is one long file because source-file mode (`java Launcher.java`) runs a single file: setup needs no build
 * step. Its classes, in order: Launcher (the store and the server), IndexedOplog, IdFirst, AwaitData,
 * DurableReplies, BsonDocuments, BsonKeys.
 * MVStore commits to its file in the background, by default once a second: a kill -9 lost the writes of
 * that last second, acknowledged ones included (an execution's result, written once, then never existed).
 * Committing every 10 ms in the background still lost a write acknowledged just before the kill (seen: an
 * insert whose change event had arrived, gone after the restart). So the background committer is off, and no
 * reply leaves before what it acknowledges is in the file (DurableReplies: a commit, written through to the
 * OS, when the store has unsaved changes). Replies that find a commit under way wait for it and share the next
 * one: a group commit. A process crash loses nothing acknowledged; a power cut can, as without fsync.
 *
 * The data file holds documents and unique-index keys as BSON (BsonDocuments, BsonKeys), not in MVStore's default
 * Java serialisation, and oplog entries keyed by a Long: after 100,000 past writes the write tail had become the
 * store serialising pages under its lock (bench:store's p99 57.6 ms; now 4.1 ms). Files written before are read as
 * they are; their index maps are rewritten once at start.
 *
 * The server reports MongoDB 4.4 (wire version 9): the Node.js driver 7.x refuses servers below wire
 * version 9, and mongo-java-server's own newest constant (MONGO_5_0) still reports wire version 8.
 *
 * Change streams run on IndexedOplog below, not on the library's own oplog, for two reasons:
 * - the library's oplog answers every poll of every change stream by reading its whole oplog collection
 *   (deserialising each entry from the MVStore), so idle CPU grew with the stack's past writes;
 * - it records a replacement as an update and answers `fullDocument: 'updateLookup'` with the document as
 *   it is at the poll, so two replacements read in one poll both showed the second: a subscriber could
 *   miss a state. A replacement's event now carries the document as written (MongoDB's own 'replace').
 */
public class Launcher {
    static final MongoVersion MONGO_4_4 = new MongoVersion() {
        public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
        public int getWireVersion() { return 9; }
    };

    /**
     * The data file, kept compact. Every commit (one each 10 ms under load) writes the pages it changed to a new
     * chunk at a free place in the file; a chunk whose pages are all superseded becomes free space only after
     * MVStore's retention time (45 s by default, for a power cut before the OS flushed newer chunks). Under
     * load the default kept ~45 s of chunks alive: 100,000 job writes grew the file to 1.6-1.9 GB for 21 MB of
     * documents, and nothing shrank it afterwards (MVStore's own idle housekeeping gave up). So:
     * - a short retention (MVSTORE_RETENTION_MS, 2000): freed chunks are reused soon, which bounds the file
     *   under load. A process crash still loses nothing (the OS has the pages); only a power cut within that
     *   window could find a chunk overwritten, as synchronous=normal risks for Temporal's SQLite.
     * - at start, a file less than MVSTORE_COMPACT_LIVE_PERCENT (60) % live is copied to a compact one
     *   (MVStoreTool.compact, into a temporary file that then replaces it: 1.6 GB to 78 MB in 4 s);
     * - then every MVSTORE_COMPACT_INTERVAL_SECONDS (10; 0: never) the same check, and an online compaction
     *   when the store is quiet (at most 2 commits since the last check; under load there were 7 every 5 s:
     *   MVStore commits far less often than every 10 ms then, each commit writing what gathered meanwhile). Not
     *   under load: a round holds the store's lock (commits wait), took 10-24 s on a loaded machine, and grew
     *   the file instead; under load the short retention bounds the file (100,000 bench:idle writes: at most
     *   217 MB, against 1.6-1.9 GB with the default retention; 114 MB once quiet).
     */
    static MVStore durableStore(String file) {
        int retentionMs = (int) envLong("MVSTORE_RETENTION_MS", 2000);
        int livePercent = (int) envLong("MVSTORE_COMPACT_LIVE_PERCENT", 60);
        long intervalMs = envLong("MVSTORE_COMPACT_INTERVAL_SECONDS", 10) * 1000;
        compactAtStart(file, livePercent);
        MVStore store = new MVStore.Builder().fileName(file).open();
        store.setRetentionTime(retentionMs);
        // No background committer: DurableReplies commits before each reply that follows a change, and with no
        // background thread MVStore writes each commit inline, so a commit that returns has written its chunk.
        // (With it, a commit could find the changes already taken by a background commit whose write was still
        // queued, and return before it.) The background thread's other job, housekeeping, goes on below.
        store.setAutoCommitDelay(0);
        BsonKeys.convertIndexes(store);
        startHousekeeper(store);
        if (intervalMs > 0) {
            Thread compactor = new Thread(() -> {
                long lastVersion = store.getCurrentVersion();
                while (!store.isClosed()) {
                    try {
                        Thread.sleep(intervalMs);
                        long commits = store.getCurrentVersion() - lastVersion;
                        if (commits <= 2) compactOnline(store, livePercent, retentionMs, commits);
                        lastVersion = store.getCurrentVersion();
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        if (store.isClosed()) return;
                        System.err.println("mvstore: compaction failed: " + e);
                    }
                }
            }, "mvstore-compactor");
            compactor.setDaemon(true);
            compactor.start();
        }
        return store;
    }

    /**
     * MVStore's own housekeeping (FileStore.doHousekeeping: rewriting sparse chunks so their space can be reused,
     * moving chunks when the file is fragmented), which its background writer ran every 10 ms and which went
     * with it: without it 100,000 writes grew the file to 2.6 GB. Run here every 200 ms while the store changes
     * and for 10 s after, then not at all while it is idle (the thread then looks every 2 s, not 5 times a
     * second: an idle server's wake-ups, bench:idle). The method is not public; it is called as MVStore's own
     * thread calls it.
     */
    static void startHousekeeper(MVStore store) {
        java.lang.reflect.Method housekeeping;
        try {
            housekeeping = FileStore.class.getDeclaredMethod("doHousekeeping", MVStore.class);
            housekeeping.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this H2 has no FileStore.doHousekeeping", e);
        }
        Thread t = new Thread(() -> {
            long lastVersion = store.getCurrentVersion();
            long changedAt = System.nanoTime();
            boolean idle = false;
            while (!store.isClosed()) {
                try {
                    Thread.sleep(idle ? 2_000 : 200);
                    long version = store.getCurrentVersion();
                    if (version != lastVersion) {
                        lastVersion = version;
                        changedAt = System.nanoTime();
                    }
                    idle = System.nanoTime() - changedAt > 10_000_000_000L;
                    if (idle) continue;
                    housekeeping.invoke(store.getFileStore(), store);
                } catch (InterruptedException e) {
                    return;
                } catch (ReflectiveOperationException | RuntimeException e) {
                    if (store.isClosed()) return;
                    System.err.println("mvstore: housekeeping failed: " + e);
                }
            }
        }, "mvstore-housekeeper");
        t.setDaemon(true);
        t.start();
    }

    /** How much of the file is live data: the share of it in chunks times the live share of those chunks. */
    static int liveRate(FileStore<?> fs) {
        return fs.getFillRate() * fs.getChunksFillRate() / 100;
    }

    static String mb(long bytes) {
        return String.format("%.1f MB", bytes / 1048576.0);
    }

    /** Before the server opens the file: copies its live data to a new file if it is mostly free space. */
    static void compactAtStart(String file, int livePercent) {
        // A compaction that a crash interrupted leaves its temporary file (or, once renamed, the new one).
        MVStoreTool.compactCleanUp(file);
        if (!new java.io.File(file).isFile()) return;
        long before;
        int live;
        try (MVStore probe = new MVStore.Builder().fileName(file).readOnly().open()) {
            before = probe.getFileStore().size();
            live = liveRate(probe.getFileStore());
        }
        if (live >= livePercent) return;
        long t0 = System.nanoTime();
        MVStoreTool.compact(file, false);
        System.out.printf("mvstore: compacted at start in %d ms: %s (%d %% live) -> %s%n",
                (System.nanoTime() - t0) / 1_000_000, mb(before), live, mb(new java.io.File(file).length()));
    }

    /**
     * Compacts the open file if less than `livePercent` % of it is live: rounds of rewriting sparse chunks, then
     * moving chunks from the end into the holes and truncating, until three rounds in a row gain nothing or 10 s
     * have passed. MVStore.compactFile alone rewrote chunks but moved only 16 MB of them, so the file did not
     * shrink. With few commits nothing frees the rewritten chunks (each waits for 5 newer versions), so old
     * versions are not kept meanwhile: a query reading an old version across the compaction could find its
     * chunk reused, which is why this waits for a quiet store.
     */
    static void compactOnline(MVStore store, int livePercent, int retentionMs, long commits) {
        if (!(store.getFileStore() instanceof RandomAccessStore fs) || liveRate(fs) >= livePercent) return;
        long before = fs.size();
        int liveBefore = liveRate(fs);
        long t0 = System.nanoTime();
        long deadline = t0 + 10_000 * 1_000_000L;
        int rounds = 0;
        store.setRetentionTime(0);
        store.setVersionsToKeep(0);
        try {
            for (int stale = 0; stale < 3 && System.nanoTime() < deadline; rounds++) {
                long size = fs.size();
                store.compact(80, 16 << 20);
                store.commit();
                fs.compactMoveChunks(100, 16 << 20, store);
                stale = fs.size() < size ? 0 : stale + 1;
            }
        } finally {
            store.setVersionsToKeep(5);
            store.setRetentionTime(retentionMs);
        }
        System.out.printf("mvstore: compacted in %d ms (%d rounds, %d commits before): %s (%d %% live) -> %s (%d %% live)%n",
                (System.nanoTime() - t0) / 1_000_000, rounds, commits, mb(before), liveBefore,
                mb(fs.size()), liveRate(fs));
    }

    static long envLong(String name, long fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : Long.parseLong(v.trim());
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
        // The oplog keeps at most this many entries, and none older than this many seconds: a resume token
        // older than that is answered ChangeStreamHistoryLost (code 286), as MongoDB does past its window.
        long maxEntries = envLong("OPLOG_MAX_ENTRIES", 20_000);
        long maxAgeSeconds = envLong("OPLOG_MAX_AGE_SECONDS", 24 * 3600);
        AtomicReference<IndexedOplog> indexedOplog = new AtomicReference<>();
        MVStore store = args.length > 2 ? durableStore(args[2]) : null;
        MongoBackend backend = store != null
                ? new H2Backend(store) {
                    @Override
                    protected Oplog createOplog() {
                        indexedOplog.set(IndexedOplog.open(this, getCursorRegistry(), maxEntries, maxAgeSeconds));
                        return indexedOplog.get();
                    }

                    @Override
                    protected MongoDatabase openOrCreateDatabase(String name) {
                        return IdFirst.h2Database(name, store, getCursorRegistry());
                    }
                }
                : new MemoryBackend() {
                    @Override
                    protected Oplog createOplog() {
                        indexedOplog.set(IndexedOplog.open(this, getCursorRegistry(), maxEntries, maxAgeSeconds));
                        return indexedOplog.get();
                    }

                    @Override
                    public MemoryDatabase openOrCreateDatabase(String name) {
                        return IdFirst.memoryDatabase(name, getCursorRegistry());
                    }
                };
        backend.version(MONGO_4_4);
        backend.enableOplog();
        // MongoServer's own pipeline, with AwaitData in front of the command handler (MongoServer.bind builds the
        // same one without it, and has no way to add a handler).
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup();
        ChannelGroup clients = new DefaultChannelGroup("mongodb-channels", workers.next());
        Channel server;
        try {
            server = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 100)
                    .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        public void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new MongoWireReplyEncoder(), new MongoWireMessageEncoder(),
                                    new MongoWireProtocolHandler(), new DurableReplies(store),
                                    new AwaitData(indexedOplog.get()),
                                    new MongoDatabaseHandler(backend, clients), new MongoExceptionHandler());
                        }
                    })
                    .bind(host, port).syncUninterruptibly().channel();
        } catch (Exception e) {
            // Most often a port another process took after the caller found it free (an outgoing connection's local
            // port among them). Said and ended at once: netty's threads would otherwise keep this JVM running with
            // nothing to serve, and the caller would wait for a readiness line that never comes.
            System.err.println("mongo-java-server cannot listen on " + host + ":" + port + ": " + e);
            System.exit(3);
            return;
        }
        System.out.println("mongo-java-server listening on " + host + ":" + port
                + (args.length > 2 ? " (data: " + args[2] + ")" : " (in memory)"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close().syncUninterruptibly();
            clients.close().syncUninterruptibly();
            boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
            workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
            backend.close();
        }));
        Thread.currentThread().join();
    }
}

/**
 * The oplog as an ordered in-memory index (timestamp → entry) over the persisted `local.oplog.rs`
 * collection: a poll reads only the entries after its position. Entries are appended under one lock, in
 * timestamp order, so a reader never sees a later entry before an earlier one (a cursor that did would
 * move past the earlier entry and never return it). Old entries are trimmed from both.
 */
class IndexedOplog implements Oplog {
    private static final String TS = "ts", NS = "ns", OP = "op", O = "o", O2 = "o2", ID = "_id", DATA = "_data";
    private static final int TRIM_EVERY = 500;

    private final MongoBackend backend;
    private final MongoCollection<Document> collection;
    private final CursorRegistry cursorRegistry;
    private final long maxEntries;
    private final long maxAgeSeconds;
    private final Clock clock;
    private final ConcurrentSkipListMap<Long, Document> index = new ConcurrentSkipListMap<>();
    private final Object appendLock = new Object();
    private volatile long lastTs;
    /** The newest timestamp trimmed away: a resume token before it has lost history. */
    private volatile long trimmedUpTo;
    private int sinceTrim;
    /**
     * Entries trimmed from the index whose documents are still in the file: the trimmer thread removes them
     * one at a time. Removing 500 documents took 0.2-0.6 s on a loaded machine, and done under appendLock it
     * stalled every write for that long once the oplog was full (a stack's p99 grew tenfold with its age).
     * Guarded by itself. Entries left there by a crash are in the file, so they are read and trimmed again.
     */
    private final java.util.ArrayDeque<Document> toRemove = new java.util.ArrayDeque<>();
    /** Held for each change of the persisted collection: an append's add, the trimmer's one removal. */
    private final Object fileLock = new Object();
    /**
     * Parked getMores (see park) and the namespace of each one's stream, woken by the next append to that
     * namespace (MongoDB too holds a change stream's getMore through writes its stream does not see). Waking
     * every stream on any write made each idle stream of a shared server ask again at the pace of other
     * databases' writes. Guarded by appendLock.
     */
    private final Map<Runnable, String> waiters = new java.util.LinkedHashMap<>();
    private final java.util.UUID ui = java.util.UUID.randomUUID();

    @SuppressWarnings("unchecked")
    static IndexedOplog open(MongoBackend backend, CursorRegistry registry, long maxEntries, long maxAgeSeconds) {
        MongoDatabase local = backend.resolveDatabase("local");
        MongoCollection<Document> col = (MongoCollection<Document>) local.resolveCollection("oplog.rs", false);
        if (col == null) col = (MongoCollection<Document>) local.createCollectionOrThrowIfExists("oplog.rs");
        return new IndexedOplog(backend, col, registry, maxEntries, maxAgeSeconds);
    }

    private IndexedOplog(MongoBackend backend, MongoCollection<Document> collection, CursorRegistry registry,
                         long maxEntries, long maxAgeSeconds) {
        this.backend = backend;
        this.collection = collection;
        this.cursorRegistry = registry;
        this.maxEntries = maxEntries;
        this.maxAgeSeconds = maxAgeSeconds;
        this.clock = backend.getClock();
        // Once at start: what the file kept from before a restart, so resume tokens survive it.
        collection.queryAllAsStream().forEach(d -> index.put(ts(d).getValue(), d));
        if (!index.isEmpty()) {
            lastTs = index.lastKey();
            // Tokens are entries' timestamps: one older than the first entry kept names a trimmed entry.
            trimmedUpTo = index.firstKey() - 1;
        }
        synchronized (appendLock) {
            trim();
        }
        Thread trimmer = new Thread(this::removeTrimmed, "oplog-trimmer");
        trimmer.setDaemon(true);
        trimmer.start();
    }

    /** The trimmer thread: removes trimmed entries from the file, each under fileLock, appends in between. */
    private void removeTrimmed() {
        while (true) {
            Document d;
            synchronized (toRemove) {
                while (toRemove.isEmpty()) {
                    try {
                        toRemove.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                d = toRemove.poll();
            }
            try {
                synchronized (fileLock) {
                    collection.removeDocument(d);
                }
            } catch (RuntimeException e) {
                System.err.println("oplog: removing a trimmed entry failed: " + e);
            }
        }
    }

    private static BsonTimestamp ts(Document d) {
        return (BsonTimestamp) d.get(TS);
    }

    private static boolean isOplog(String namespace) {
        return namespace.equals("local.oplog.rs");
    }

    /** A replacement document (no update operator), as opposed to `{$set: ...}`. */
    private static boolean isReplacement(Document update) {
        for (String k : update.keySet()) if (k.startsWith("$")) return false;
        return true;
    }

    private Document entry(String op, String namespace) {
        return new Document().append(TS, null).append("t", 1L).append("h", 0L).append("v", 2L)
                .append(OP, op).append(NS, namespace).append("ui", ui).append("wall", clock.instant());
    }

    /** Timestamps strictly increase, across restarts too (the clock's seconds, then a counter). */
    private BsonTimestamp nextTs() {
        Instant now = clock.instant();
        long candidate = new BsonTimestamp(now, 1).getValue();
        long value = Math.max(candidate, lastTs + 1);
        lastTs = value;
        return new BsonTimestamp(value);
    }

    private void append(List<Document> entries) {
        if (entries.isEmpty()) return;
        synchronized (appendLock) {
            for (Document e : entries) {
                // The entry's _id is its timestamp's value: a Long, which the data file stores and compares cheaply
                // (left out, the library gave each entry an ObjectId, Java-serialised in every page of the oplog).
                BsonTimestamp ts = nextTs();
                e.put(TS, ts);
                e.put(ID, ts.getValue());
                synchronized (fileLock) {
                    collection.addDocument(e);
                }
                index.put(ts(e).getValue(), e);
            }
            java.util.Set<String> written = new java.util.HashSet<>();
            for (Document e : entries) written.add((String) e.get(NS));
            waiters.entrySet().removeIf(w -> {
                if (written.stream().noneMatch(ns -> matchesNamespace(ns, w.getValue()))) return false;
                w.getKey().run();
                return true;
            });
            sinceTrim += entries.size();
            if (sinceTrim >= TRIM_EVERY) {
                sinceTrim = 0;
                trim();
            }
        }
    }

    /**
     * Drops entries beyond the count bound or older than the age bound from the index, and hands them to the
     * trimmer thread for the file. Under appendLock.
     */
    private void trim() {
        long cutoff = 0;
        int excess = index.size() - (int) Math.min(Integer.MAX_VALUE, maxEntries);
        if (excess > 0) {
            Long k = index.keySet().stream().skip(excess - 1).findFirst().orElse(null);
            if (k != null) cutoff = k;
        }
        long ageCutoff = new BsonTimestamp(clock.instant().minusSeconds(maxAgeSeconds), 0).getValue();
        Map.Entry<Long, Document> oldestKept = index.floorEntry(ageCutoff);
        if (oldestKept != null) cutoff = Math.max(cutoff, oldestKept.getKey());
        if (cutoff == 0) return;
        ConcurrentNavigableMap<Long, Document> gone = index.headMap(cutoff, true);
        if (gone.isEmpty()) return;
        trimmedUpTo = Math.max(trimmedUpTo, cutoff);
        synchronized (toRemove) {
            toRemove.addAll(gone.values());
            toRemove.notifyAll();
        }
        gone.clear();
    }

    @Override
    public void handleInsert(String namespace, List<Document> documents) {
        if (isOplog(namespace)) return;
        List<Document> entries = new ArrayList<>();
        for (Document d : documents) entries.add(entry("i", namespace).append(O, d.cloneDeeply()));
        append(entries);
    }

    @Override
    public void handleUpdate(String namespace, Document selector, Document update, List<Object> modifiedIds) {
        if (isOplog(namespace)) return;
        List<Document> entries = new ArrayList<>();
        boolean replacement = isReplacement(update);
        for (Object id : modifiedIds) {
            Document o;
            if (replacement) {
                o = new Document(ID, id);
                for (Map.Entry<String, Object> f : update.cloneDeeply().entrySet())
                    if (!f.getKey().equals(ID)) o.put(f.getKey(), f.getValue());
            } else {
                o = update.cloneDeeply();
            }
            entries.add(entry("u", namespace).append(O, o).append(O2, new Document(ID, id))
                    .append("replacement", replacement));
        }
        append(entries);
    }

    @Override
    public void handleDelete(String namespace, Document query, List<Object> deletedIds) {
        if (isOplog(namespace)) return;
        List<Document> entries = new ArrayList<>();
        for (Object id : deletedIds) entries.add(entry("d", namespace).append(O, new Document(ID, id)));
        append(entries);
    }

    @Override
    public void handleDropCollection(String namespace) {
        if (isOplog(namespace)) return;
        int dot = namespace.indexOf('.');
        append(List.of(entry("c", namespace.substring(0, dot) + ".$cmd")
                .append(O, new Document("drop", namespace.substring(dot + 1)))));
    }

    @Override
    public Cursor createCursor(Document changeStream, String namespace, Aggregation aggregation) {
        Document startAfter = (Document) changeStream.get("startAfter");
        Document resumeAfter = (Document) changeStream.get("resumeAfter");
        BsonTimestamp startAt = (BsonTimestamp) changeStream.get("startAtOperationTime");
        final long from;
        final boolean inclusive;
        Document token = startAfter != null ? startAfter : resumeAfter;
        if (token != null) {
            from = Long.parseLong((String) token.get(DATA), 16);
            inclusive = false;
            // A token the trimmed oplog no longer reaches: MongoDB's answer, so the client can re-read.
            if (from < trimmedUpTo)
                throw new MongoServerError(286, "ChangeStreamHistoryLost",
                        "the resume token is older than the oplog's retention window");
        } else if (startAt != null) {
            from = startAt.getValue();
            inclusive = true;
        } else {
            from = lastTs;
            inclusive = false;
        }
        AwaitCursor cursor = new AwaitCursor(cursorRegistry.generateCursorId(), from, inclusive, changeStream,
                namespace, aggregation);
        cursorRegistry.add(cursor);
        return cursor;
    }

    /**
     * Holds a getMore of one of this oplog's cursors until there is something after its position, or maxTimeMS
     * has passed: MongoDB's awaitData, which mongo-java-server lacks (it answered every getMore at once, so an
     * idle change stream was a poll every 20 ms from each API process). `release` passes the getMore on; it runs
     * on `loop`, the connection's event loop, once. False: nothing to wait for (not such a cursor, or something
     * to read already), pass it on now.
     */
    boolean park(long cursorId, long maxTimeMs, EventExecutor loop, Runnable release) {
        Cursor c;
        try {
            c = cursorRegistry.getCursor(cursorId);
        } catch (RuntimeException notFound) {
            return false;
        }
        if (!(c instanceof AwaitCursor cursor)) return false;
        AtomicBoolean released = new AtomicBoolean();
        AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
        Runnable wake = () -> {
            if (!released.compareAndSet(false, true)) return;
            ScheduledFuture<?> t = timer.get();
            if (t != null) t.cancel(false);
            loop.execute(release);
        };
        synchronized (appendLock) {
            if (cursor.hasUnread()) return false;
            waiters.put(wake, cursor.namespace);
        }
        timer.set(loop.schedule(() -> {
            synchronized (appendLock) {
                waiters.remove(wake);
            }
            wake.run();
        }, maxTimeMs, TimeUnit.MILLISECONDS));
        return true;
    }

    /**
     * A change stream's cursor: the entries after its position that match its namespace, through its pipeline.
     * Its position moves past every entry it read, matched or not (the library's OplogCursor moved only past
     * those it returned, so a stream filtered to a few collections re-read the others on every poll, and a
     * getMore held until "something after the position" would never be held).
     */
    final class AwaitCursor extends AbstractCursor {
        private final Document changeStream;
        private final String namespace;
        private final Aggregation aggregation;
        private long position;
        private boolean inclusive;

        AwaitCursor(long id, long position, boolean inclusive, Document changeStream, String namespace,
                    Aggregation aggregation) {
            super(id);
            this.position = position;
            this.inclusive = inclusive;
            this.changeStream = changeStream;
            this.namespace = namespace;
            this.aggregation = aggregation;
        }

        boolean hasUnread() {
            return (inclusive ? index.ceilingKey(position) : index.higherKey(position)) != null;
        }

        @Override
        public boolean isEmpty() {
            return false;
        }

        @Override
        public synchronized List<Document> takeDocuments(int numberToReturn) {
            long[] scanned = {-1};
            Stream<Document> entries = index.tailMap(position, inclusive).entrySet().stream()
                    .peek(e -> scanned[0] = e.getKey())
                    .map(Map.Entry::getValue)
                    .filter(d -> matchesNamespace((String) d.get(NS), namespace))
                    .map(d -> toEvent(d, changeStream));
            Stream<Document> events = aggregation.runStagesAsStream(entries);
            if (numberToReturn > 0) events = events.limit(numberToReturn);
            List<Document> batch = events.collect(Collectors.toList());
            // A full batch may have left entries unread: it goes on after its last event. Otherwise everything
            // up to the last entry scanned was read.
            long next = numberToReturn > 0 && batch.size() == numberToReturn
                    ? Long.parseLong((String) ((Document) batch.get(batch.size() - 1).get(ID)).get(DATA), 16)
                    : scanned[0];
            if (next >= 0) {
                position = next;
                inclusive = false;
            }
            return batch;
        }
    }

    /** A collection's stream sees its collection and its database's commands; `db.1` is `db.watch()`. */
    private static boolean matchesNamespace(String entryNs, String namespace) {
        if (entryNs.equals(namespace)) return true;
        int a = entryNs.indexOf('.'), b = namespace.indexOf('.');
        if (!entryNs.substring(0, a).equals(namespace.substring(0, b))) return false;
        return namespace.substring(b + 1).equals("1") || entryNs.substring(a + 1).equals("$cmd");
    }

    /** MongoDB's `ns` of an event: lets one database-wide stream tell its collections apart. */
    private static Document ns(Document entry) {
        String ns = (String) entry.get(NS);
        int dot = ns.indexOf('.');
        return new Document("db", ns.substring(0, dot)).append("coll", ns.substring(dot + 1));
    }

    private Document toEvent(Document entry, Document changeStream) {
        BsonTimestamp ts = ts(entry);
        Document id = new Document(DATA, Long.toHexString(ts.getValue()));
        Document o = (Document) entry.get(O);
        String op = (String) entry.get(OP);
        switch (op) {
            case "i":
                return new Document(ID, id).append("operationType", "insert").append("fullDocument", o)
                        .append("documentKey", new Document(ID, o.get(ID))).append("clusterTime", ts).append("ns", ns(entry));
            case "d":
                return new Document(ID, id).append("operationType", "delete").append("fullDocument", null)
                        .append("documentKey", o).append("clusterTime", ts).append("ns", ns(entry));
            case "u": {
                Document key = (Document) entry.get(O2);
                boolean replacement = Boolean.TRUE.equals(entry.get("replacement")) || isReplacement(o);
                if (replacement)
                    return new Document(ID, id).append("operationType", "replace").append("fullDocument", o)
                            .append("documentKey", key).append("clusterTime", ts).append("ns", ns(entry));
                return new Document(ID, id).append("operationType", "update")
                        .append("fullDocument", lookUp(entry, key, o, changeStream))
                        .append("documentKey", key).append("clusterTime", ts).append("ns", ns(entry));
            }
            case "c":
                return new Document(ID, id).append("operationType", o.keySet().iterator().next())
                        .append("clusterTime", ts).append("ns", ns(entry));
            default:
                throw new IllegalArgumentException("unknown oplog operation: " + op);
        }
    }

    /** An operator update's document: looked up by _id when asked for (updateLookup), else its $set fields. */
    private Document lookUp(Document entry, Document key, Document update, Document changeStream) {
        if ("updateLookup".equals(changeStream.get("fullDocument"))) {
            String ns = (String) entry.get(NS);
            int dot = ns.indexOf('.');
            MongoCollection<?> col = backend.resolveDatabase(ns.substring(0, dot))
                    .resolveCollection(ns.substring(dot + 1), false);
            if (col != null) {
                for (Document d : col.handleQuery(new Document(ID, key.get(ID)))) return d;
            }
        }
        Document delta = new Document();
        if (update.get("$set") instanceof Document s) delta.appendAll(s);
        if (update.get("$unset") instanceof Document u) delta.appendAll(u);
        return delta;
    }
}

/**
 * MongoDB's awaitData for change streams: a getMore with maxTimeMS on a change stream's cursor that has nothing
 * to read is held (IndexedOplog.park) until a write or the time is up, instead of answered empty at once. Every
 * other message goes straight on to the command handler.
 */
/**
 * Queries by _id that name other fields too go through the _id index. mongo-java-server's unique index takes a
 * query only when its keys are exactly the index's (AbstractUniqueIndex.canHandle), so `{_id, version: {$lt: v}}`,
 * the filter of every versioned write of the service's projection, read and matched every document of the
 * collection: a job's state write cost as much as the jobs collection was large, and the stack slowed down as its
 * history grew (jstack under bench:group after 100,000 past writes: AbstractMongoCollection.matchDocumentsFromStream
 * under updateDocuments). The collections made here look the _id up in its index and match the whole query against
 * that one document; any other query goes as before.
 */
final class IdFirst {
    private IdFirst() {}

    /** The positions of the document a query names by a plain _id beside other fields; null for any other query. */
    static <P> Iterable<P> positions(List<Index<P>> indexes, Document query) {
        if (query.size() < 2 || !query.containsKey("_id")) return null;
        Object id = query.get("_id");
        if (id == null || id instanceof Document || id instanceof Collection || id instanceof BsonRegularExpression)
            return null;
        Document byId = new Document("_id", id);
        for (Index<P> index : indexes) {
            if ("_id_".equals(index.getName()) && index.canHandle(byId)) return index.getPositions(byId);
        }
        return null;
    }

    /** H2Database as the library makes it, with collections whose queries take the _id first. */
    static H2Database h2Database(String name, MVStore store, CursorRegistry cursors) {
        return new H2Database(name, store, cursors) {
            @Override
            protected Index<Object> openOrCreateUniqueIndex(String collection, String indexName, List<IndexKey> keys,
                    boolean sparse) {
                // The library opens the index's map by name; opened here first, it gets this one, with BSON keys.
                String map = getFullCollectionNamespace(collection) + "._index_" + indexName;
                BsonKeys.open(store, map);
                Index<Object> index = super.openOrCreateUniqueIndex(collection, indexName, keys, sparse);
                if (!((Object) store.openMap(map).getKeyType() instanceof BsonKeys))
                    throw new IllegalStateException("index " + map + " was not opened with BSON keys");
                return index;
            }

            @Override
            protected MongoCollection<Object> openOrCreateCollection(String collection, CollectionOptions options) {
                String ns = getFullCollectionNamespace(collection);
                MVMap<Object, Document> documents = store.openMap("databases." + ns,
                        new MVMap.Builder<Object, Document>().valueType(new BsonDocuments()));
                return new H2Collection(this, collection, options, documents, store.openMap("meta." + ns), cursors) {
                    @Override
                    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit,
                            int batchSize, Document fields) {
                        Iterable<Object> byId = positions(getIndexes(), query);
                        return byId != null
                                ? matchDocuments(query, byId, orderBy, skip, limit, batchSize, fields)
                                : super.queryDocuments(query, orderBy, skip, limit, batchSize, fields);
                    }
                };
            }
        };
    }

    /** MemoryDatabase as the library makes it, with collections whose queries take the _id first. */
    static MemoryDatabase memoryDatabase(String name, CursorRegistry cursors) {
        return new MemoryDatabase(name, cursors) {
            @Override
            protected MemoryCollection openOrCreateCollection(String collection, CollectionOptions options) {
                return new MemoryCollection(this, collection, options, cursors) {
                    @Override
                    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit,
                            int batchSize, Document fields) {
                        Iterable<Integer> byId = positions(getIndexes(), query);
                        return byId != null
                                ? matchDocuments(query, byId, orderBy, skip, limit, batchSize, fields)
                                : super.queryDocuments(query, orderBy, skip, limit, batchSize, fields);
                    }
                };
            }
        };
    }
}

class AwaitData extends ChannelInboundHandlerAdapter {
    private final IndexedOplog oplog;

    AwaitData(IndexedOplog oplog) {
        this.oplog = oplog;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof MongoMessage m && oplog != null) {
            Document q = m.getDocument();
            String command = q.isEmpty() ? "" : q.keySet().iterator().next();
            if (command.equalsIgnoreCase("getMore") && q.get(command) instanceof Number cursorId
                    && q.get("maxTimeMS") instanceof Number maxTimeMs && maxTimeMs.longValue() > 0
                    && oplog.park(cursorId.longValue(), maxTimeMs.longValue(), ctx.executor(),
                            () -> ctx.fireChannelRead(msg)))
                return;
        }
        ctx.fireChannelRead(msg);
    }
}

/**
 * Commits the data file before a reply goes out, if anything is unsaved: an acknowledged write survives a kill -9
 * of this process (see Launcher's notes). Reads find nothing unsaved and cost nothing. Without a data file (in
 * memory) it does nothing.
 */
class DurableReplies extends ChannelOutboundHandlerAdapter {
    private final MVStore store;

    DurableReplies(MVStore store) {
        this.store = store;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (store != null && store.hasUnsavedChanges()) store.commit();
        ctx.write(msg, promise);
    }
}

/**
 * How the data file stores a collection's documents: as BSON, the encoding they came in on the wire, instead of
 * MVStore's default Java serialisation. A flight recording of the aged write tail (bench:store after 100,000 past
 * writes) had ObjectOutputStream on top: the housekeeper rewriting sparse chunks under the store's lock, and the
 * commits waiting for it, spent most of their time serialising documents. For a job's record Java serialisation
 * wrote 862 bytes in 7.5 us and read it back in 30 us; BSON is 332 bytes, written in 2 us and read in 2 us.
 *
 * A value is the byte BSON then the document's BSON. Files written before this (Java-serialised values, whose
 * first byte is one of ObjectDataType's tags, all below 120) are read as they are, with no migration: a page
 * is written as BSON the next time it changes or the housekeeper moves it. A document BSON cannot encode (none
 * the wire can carry) is written the old way rather than fail a commit. A file written by this launcher cannot
 * be read by an older one.
 */
final class BsonDocuments extends BasicDataType<Document> {
    static final byte BSON = (byte) 0xBD;
    private final ObjectDataType legacy = new ObjectDataType();

    @Override
    public int getMemory(Document document) {
        return estimate(document);
    }

    /** The heap a value takes, roughly: MVStore splits pages and sizes its cache by it. */
    static int estimate(Object value) {
        if (value instanceof String s) return 40 + 2 * s.length();
        if (value instanceof Map<?, ?> map) {
            int n = 56;
            for (Map.Entry<?, ?> e : map.entrySet()) n += 72 + 2 * e.getKey().toString().length() + estimate(e.getValue());
            return n;
        }
        if (value instanceof Collection<?> list) {
            int n = 40;
            for (Object o : list) n += 8 + estimate(o);
            return n;
        }
        if (value instanceof BinData b) return 32 + b.getData().length;
        return 24;
    }

    @Override
    public void write(WriteBuffer buff, Document document) {
        if (!writeBson(buff, document)) legacy.write(buff, document);
    }

    @Override
    public Document read(ByteBuffer buff) {
        Document document = readBson(buff);
        return document != null ? document : (Document) legacy.read(buff);
    }

    /** Writes the byte BSON and the document's BSON; false, with nothing written, if BSON cannot encode it. */
    static boolean writeBson(WriteBuffer buff, Document document) {
        ByteBuf bson = Unpooled.buffer(256);
        try {
            BsonEncoder.encodeDocument(document, bson);
        } catch (RuntimeException e) {
            return false;
        }
        buff.put(BSON).put(bson.array(), bson.arrayOffset() + bson.readerIndex(), bson.readableBytes());
        return true;
    }

    /** The document at the buffer's position, read past, if it was written by writeBson; else null, nothing read. */
    static Document readBson(ByteBuffer buff) {
        if (buff.get(buff.position()) != BSON) return null;
        int start = buff.position() + 1;
        int length = buff.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(start);
        Document document = BsonDecoder.decodeBson(Unpooled.wrappedBuffer(buff.slice(start, length)));
        buff.position(start + length);
        return document;
    }

    @Override
    public Document[] createStorage(int size) {
        return new Document[size];
    }
}

/**
 * The keys of the unique indexes in the data file (every collection's _id index among them), as BSON too. With
 * MVStore's default type a key (KeyValue, not Comparable) was compared by Java-serialising both sides: every
 * lookup of an insert's or upsert's _id serialised two keys per step of its binary search, and after BsonDocuments
 * that and the index pages' own serialisation were what remained of ObjectOutputStream in a profile of the aged
 * write tail. Here keys compare value by value (same class: its natural order, for the classes whose order agrees
 * with equals; otherwise by the class's name; values of other classes by their BSON bytes), which keeps the
 * library's rule that two keys are the same only if their values are equal and of the same type.
 *
 * That order is not the old one (serialised bytes), so an index map written before cannot be searched with it:
 * at start, before anything else writes, each index map not listed in KEY_FORMATS is copied into a new map in
 * this order, which then takes its name, in one commit (crash-safe: the old map stays until that commit). The
 * list then names it; index maps created later are listed when created.
 */
final class BsonKeys extends BasicDataType<KeyValue> {
    static final String KEY_FORMATS = "$launcher.bsonKeyIndexes";
    private final ObjectDataType legacy = new ObjectDataType();

    static MVMap<KeyValue, Object> open(MVStore store, String name) {
        if (store.hasMap(name) && !store.<String, String>openMap(KEY_FORMATS).containsKey(name))
            throw new IllegalStateException("index map " + name + " predates BSON keys and was not rewritten at start");
        MVMap<KeyValue, Object> map = store.openMap(name, new MVMap.Builder<KeyValue, Object>().keyType(new BsonKeys()));
        store.<String, String>openMap(KEY_FORMATS).putIfAbsent(name, "bson");
        return map;
    }

    /** Rewrites the index maps written before BSON keys in their new order; run before the server starts. */
    static void convertIndexes(MVStore store) {
        MVMap<String, String> formats = store.openMap(KEY_FORMATS);
        // Entries of dropped indexes go: the list stays as long as the live index maps, however many came and went.
        for (String name : new ArrayList<>(formats.keySet())) if (!store.hasMap(name)) formats.remove(name);
        for (String name : new ArrayList<>(store.getMapNames())) {
            // Index maps are named <db>.<collection>._index_<index>; data and meta maps start with these prefixes.
            if (!name.contains("._index_") || name.startsWith("databases.") || name.startsWith("meta.")
                    || name.startsWith("$launcher.") || formats.containsKey(name))
                continue;
            long t0 = System.nanoTime();
            String tmp = "$launcher.converting." + name;
            if (store.hasMap(tmp)) store.removeMap(tmp);
            // Read in its pages' order, never searched, so the type only has to read its keys (either format).
            MVMap<KeyValue, Object> old = store.openMap(name, new MVMap.Builder<KeyValue, Object>().keyType(new BsonKeys()));
            MVMap<KeyValue, Object> fresh = store.openMap(tmp, new MVMap.Builder<KeyValue, Object>().keyType(new BsonKeys()));
            for (Map.Entry<KeyValue, Object> e : old.entrySet()) fresh.put(e.getKey(), e.getValue());
            store.removeMap(old);
            store.renameMap(fresh, name);
            formats.put(name, "bson");
            store.commit();
            System.out.printf("mvstore: index %s rewritten with BSON keys (%d keys) in %d ms%n", name, fresh.size(),
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }

    @Override
    public int getMemory(KeyValue key) {
        int n = 40;
        for (Object v : key) n += 8 + BsonDocuments.estimate(v);
        return n;
    }

    @Override
    public int compare(KeyValue a, KeyValue b) {
        if (a.size() != b.size()) return Integer.compare(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            int c = compareValues(a.get(i), b.get(i));
            if (c != 0) return c;
        }
        return 0;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private int compareValues(Object x, Object y) {
        if (x == y) return 0;
        if (x == null) return -1;
        if (y == null) return 1;
        if (x.getClass() != y.getClass()) return x.getClass().getName().compareTo(y.getClass().getName());
        if (x instanceof String || x instanceof Integer || x instanceof Long || x instanceof Double
                || x instanceof Boolean || x instanceof Instant || x instanceof java.util.UUID
                || x instanceof de.bwaldvogel.mongo.bson.ObjectId || x instanceof BsonTimestamp)
            return ((Comparable) x).compareTo(y);
        return java.util.Arrays.compareUnsigned(bytes(x), bytes(y));
    }

    /** A value's bytes: as BSON (in a document of its own), or Java-serialised if BSON cannot carry it. */
    private byte[] bytes(Object value) {
        ByteBuf bson = Unpooled.buffer(64);
        try {
            BsonEncoder.encodeDocument(new Document("v", value), bson);
            byte[] out = new byte[bson.readableBytes()];
            bson.readBytes(out);
            return out;
        } catch (RuntimeException e) {
            WriteBuffer buff = new WriteBuffer();
            legacy.write(buff, value);
            ByteBuffer written = buff.getBuffer().flip();
            byte[] out = new byte[written.remaining()];
            written.get(out);
            return out;
        }
    }

    /** A key as the document {"0": its first value, "1": the next, …}. */
    @Override
    public void write(WriteBuffer buff, KeyValue key) {
        Document values = new Document();
        for (int i = 0; i < key.size(); i++) values.put(Integer.toString(i), key.get(i));
        if (!BsonDocuments.writeBson(buff, values)) legacy.write(buff, key);
    }

    @Override
    public KeyValue read(ByteBuffer buff) {
        Document values = BsonDocuments.readBson(buff);
        return values != null ? new KeyValue(values.values()) : (KeyValue) legacy.read(buff);
    }

    @Override
    public KeyValue[] createStorage(int size) {
        return new KeyValue[size];
    }
}
