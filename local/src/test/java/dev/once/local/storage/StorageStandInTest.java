package dev.once.local.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.NoCredentials;
import com.google.cloud.ReadChannel;
import com.google.cloud.WriteChannel;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.wire.http.Json;
import dev.once.wire.storage.Hashes;
import dev.once.wire.storage.ObjectFinalized;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The real google-cloud-storage client (HTTP transport, no credentials) against the stand-in. */
class StorageStandInTest {
  private static final AtomicInteger BUCKETS = new AtomicInteger();
  private static StorageStandIn standIn;
  private static Storage storage;

  @BeforeAll
  static void start() {
    standIn = StorageStandIn.start();
    storage = client(standIn.endpoint(), RetrySettings.newBuilder().setMaxAttempts(1).build());
  }

  @AfterAll
  static void stop() throws Exception {
    storage.close();
    standIn.close();
  }

  static Storage client(String host, RetrySettings retries) {
    return StorageOptions.http()
        .setHost(host)
        .setProjectId("demo-project")
        .setCredentials(NoCredentials.getInstance())
        .setRetrySettings(retries)
        .build()
        .getService();
  }

  private static String bucket() {
    return "bucket-" + BUCKETS.incrementAndGet();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void upload_thenGetAndRead_returnWhatWasWritten() {
    String bucket = bucket();
    BlobInfo info = BlobInfo.newBuilder(bucket, "docs/a b.pdf").setContentType("application/pdf")
        .setMetadata(Map.of("tenant", "t1")).build();

    Blob created = storage.create(info, bytes("%PDF-1.7 first"));
    Blob got = storage.get(BlobId.of(bucket, "docs/a b.pdf"));

    assertEquals(created.getGeneration(), got.getGeneration());
    assertEquals("application/pdf", got.getContentType());
    assertEquals(14L, got.getSize());
    assertEquals("t1", got.getMetadata().get("tenant"));
    assertEquals(Hashes.md5(bytes("%PDF-1.7 first")), got.getMd5());
    assertEquals(Hashes.crc32c(bytes("%PDF-1.7 first")), got.getCrc32c());
    assertArrayEquals(bytes("%PDF-1.7 first"), storage.readAllBytes(BlobId.of(bucket, "docs/a b.pdf")));
  }

  @Test
  void overwrite_keepsThePastGenerationReadable() {
    String bucket = bucket();
    long first = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one")).getGeneration();
    long second = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("two")).getGeneration();

    assertTrue(second > first, "generations grow: " + first + " then " + second);
    assertArrayEquals(bytes("one"), storage.readAllBytes(BlobId.of(bucket, "doc", first)));
    assertArrayEquals(bytes("two"), storage.readAllBytes(BlobId.of(bucket, "doc")));
    assertEquals(first, storage.get(BlobId.of(bucket, "doc", first)).getGeneration());
  }

  @Test
  void failedGenerationPrecondition_is412() {
    String bucket = bucket();
    long generation = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one")).getGeneration();

    StorageException wrongMatch = assertThrows(StorageException.class, () -> storage.create(
        BlobInfo.newBuilder(bucket, "doc").build(), bytes("two"),
        Storage.BlobTargetOption.generationMatch(generation + 1)));
    StorageException notNew = assertThrows(StorageException.class, () -> storage.create(
        BlobInfo.newBuilder(bucket, "doc").build(), bytes("two"), Storage.BlobTargetOption.doesNotExist()));
    StorageException sameGeneration = assertThrows(StorageException.class, () -> storage.create(
        BlobInfo.newBuilder(bucket, "doc", generation).build(), bytes("two"),
        Storage.BlobTargetOption.generationNotMatch()));

    assertEquals(412, wrongMatch.getCode());
    assertEquals(412, notNew.getCode());
    assertEquals(412, sameGeneration.getCode());
    assertArrayEquals(bytes("one"), storage.readAllBytes(BlobId.of(bucket, "doc")));
  }

  @Test
  void matchingGenerationPrecondition_writesANewGeneration() {
    String bucket = bucket();
    Blob first = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one"),
        Storage.BlobTargetOption.doesNotExist());
    Blob second = storage.create(BlobInfo.newBuilder(bucket, "doc", first.getGeneration()).build(), bytes("two"),
        Storage.BlobTargetOption.generationMatch());

    assertTrue(second.getGeneration() > first.getGeneration());
  }

  @Test
  void missingGeneration_is404() {
    String bucket = bucket();
    long generation = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one")).getGeneration();

    StorageException missing = assertThrows(StorageException.class,
        () -> storage.readAllBytes(BlobId.of(bucket, "doc", generation + 1)));
    assertEquals(404, missing.getCode());
    assertNull(storage.get(BlobId.of(bucket, "doc", generation + 1)));
    assertNull(storage.get(BlobId.of(bucket, "no-such-object")));
  }

  @Test
  void deletedGeneration_noLongerExists_whileOthersRemain() {
    String bucket = bucket();
    long first = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one")).getGeneration();
    long second = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("two")).getGeneration();

    assertTrue(storage.delete(BlobId.of(bucket, "doc", first)));
    standIn.deleteGeneration(bucket, "doc", second);

    assertNull(storage.get(BlobId.of(bucket, "doc", first)));
    assertNull(storage.get(BlobId.of(bucket, "doc")));
    assertEquals(404, assertThrows(StorageException.class,
        () -> storage.readAllBytes(BlobId.of(bucket, "doc", second))).getCode());
    assertTrue(!storage.delete(BlobId.of(bucket, "doc", first)), "deleting a missing generation reports false");
  }

  @Test
  void deletingTheLiveVersion_keepsOlderGenerationsReadable() {
    String bucket = bucket();
    long generation = storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one")).getGeneration();

    assertTrue(storage.delete(BlobId.of(bucket, "doc")));

    assertNull(storage.get(BlobId.of(bucket, "doc")));
    assertArrayEquals(bytes("one"), storage.readAllBytes(BlobId.of(bucket, "doc", generation)));
  }

  @Test
  void list_pagesThroughLiveObjects_withPrefixAndDelimiter() {
    String bucket = bucket();
    for (String name : List.of("in/a", "in/b", "in/c", "in/sub/d", "out/e")) {
      storage.create(BlobInfo.newBuilder(bucket, name).build(), bytes(name));
    }
    storage.create(BlobInfo.newBuilder(bucket, "in/a").build(), bytes("again"));

    List<String> names = new ArrayList<>();
    storage.list(bucket, Storage.BlobListOption.prefix("in/"), Storage.BlobListOption.pageSize(2))
        .iterateAll().forEach(b -> names.add(b.getName()));
    List<String> shallow = new ArrayList<>();
    storage.list(bucket, Storage.BlobListOption.prefix("in/"), Storage.BlobListOption.currentDirectory())
        .iterateAll().forEach(b -> shallow.add(b.getName()));
    List<Long> versionsOfA = new ArrayList<>();
    storage.list(bucket, Storage.BlobListOption.prefix("in/a"), Storage.BlobListOption.versions(true))
        .iterateAll().forEach(b -> versionsOfA.add(b.getGeneration()));

    assertEquals(List.of("in/a", "in/b", "in/c", "in/sub/d"), names);
    assertEquals(List.of("in/a", "in/b", "in/c", "in/sub/"), shallow);
    assertEquals(2, versionsOfA.size());
  }

  @Test
  void bucketList_namesEveryBucket_createdOrWrittenTo() {
    String created = bucket();
    String written = bucket();
    standIn.createBucket(created);
    storage.create(BlobInfo.newBuilder(written, "doc").build(), bytes("x"));

    List<String> names = new ArrayList<>();
    storage.list().iterateAll().forEach(b -> names.add(b.getName()));

    assertTrue(names.containsAll(List.of(created, written)), names.toString());
    assertEquals(names.stream().sorted().toList(), names, "by name, as GCS lists them");
  }

  @Test
  void reader_streamsAPastGeneration() throws Exception {
    String bucket = bucket();
    byte[] big = new byte[300_000];
    new Random(7).nextBytes(big);
    long first = storage.create(BlobInfo.newBuilder(bucket, "big").build(), big).getGeneration();
    storage.create(BlobInfo.newBuilder(bucket, "big").build(), bytes("small"));

    ByteArrayOutputStream read = new ByteArrayOutputStream();
    try (ReadChannel reader = storage.reader(BlobId.of(bucket, "big", first))) {
      reader.setChunkSize(64 * 1024);
      ByteBuffer buffer = ByteBuffer.allocate(50_000);
      while (reader.read(buffer) >= 0) {
        buffer.flip();
        read.write(buffer.array(), 0, buffer.limit());
        buffer.clear();
      }
    }
    assertArrayEquals(big, read.toByteArray());
  }

  @Test
  void writer_uploadsInResumableChunks() throws Exception {
    String bucket = bucket();
    byte[] data = new byte[700_000];
    new Random(11).nextBytes(data);

    try (WriteChannel writer =
        storage.writer(BlobInfo.newBuilder(bucket, "chunked").setContentType("text/plain").build())) {
      writer.setChunkSize(256 * 1024);
      ByteBuffer source = ByteBuffer.wrap(data);
      while (source.hasRemaining()) {
        ByteBuffer slice = source.slice();
        slice.limit(Math.min(100_000, slice.remaining()));
        source.position(source.position() + writer.write(slice));
      }
    }

    Blob blob = storage.get(BlobId.of(bucket, "chunked"));
    assertEquals(700_000L, blob.getSize());
    assertEquals("text/plain", blob.getContentType());
    assertArrayEquals(data, storage.readAllBytes(BlobId.of(bucket, "chunked")));
  }

  @Test
  void injected503s_areRetriedByTheClient() throws Exception {
    String bucket = bucket();
    storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one"));
    RetrySettings fastRetries = RetrySettings.newBuilder().setMaxAttempts(5)
        .setInitialRetryDelayDuration(Duration.ofMillis(5)).setMaxRetryDelayDuration(Duration.ofMillis(20))
        .setRetryDelayMultiplier(2).setTotalTimeoutDuration(Duration.ofSeconds(30))
        .setInitialRpcTimeoutDuration(Duration.ofSeconds(10)).setMaxRpcTimeoutDuration(Duration.ofSeconds(10))
        .setRpcTimeoutMultiplier(1).build();
    long failuresBefore = standIn.counters().get("injectedFailures");

    Storage retrying = client(standIn.endpoint(), fastRetries);
    try {
      standIn.failNext(2);
      assertArrayEquals(bytes("one"), retrying.readAllBytes(BlobId.of(bucket, "doc")));
      standIn.failNext(2);
      assertNotNull(retrying.get(BlobId.of(bucket, "doc")));
    } finally {
      retrying.close();
    }

    assertEquals(failuresBefore + 4, standIn.counters().get("injectedFailures"));
  }

  @Test
  void injected503_withoutRetries_reachesTheCaller() {
    String bucket = bucket();
    standIn.failNext(1);
    StorageException e = assertThrows(StorageException.class, () -> storage.get(BlobId.of(bucket, "doc")));
    assertEquals(503, e.getCode());
  }

  @Test
  void everyWrite_notifiesFinalize_withTheObjectResource() throws Exception {
    String bucket = bucket();
    List<ObjectFinalized> received = new CopyOnWriteArrayList<>();
    ObjectFinalizeListener listener = received::add;
    standIn.addListener(listener);
    try {
      Blob blob = storage.create(BlobInfo.newBuilder(bucket, "doc.pdf").setContentType("application/pdf").build(),
          bytes("pdf"));

      Await.until(Bounds.CALL, () -> received.stream().anyMatch(n -> n.bucket().equals(bucket)),
          "the finalize notification");
      ObjectFinalized n = received.stream().filter(e -> e.bucket().equals(bucket)).findFirst().orElseThrow();
      var object = n.object();
      assertEquals("doc.pdf", n.name());
      assertEquals(blob.getGeneration(), n.generation());
      assertEquals(bucket, object.get("bucket").asText());
      assertEquals("doc.pdf", object.get("name").asText());
      assertEquals(Long.toString(blob.getGeneration()), object.get("generation").asText());
      assertEquals("1", object.get("metageneration").asText());
      assertEquals("application/pdf", object.get("contentType").asText());
      assertEquals("3", object.get("size").asText());
      assertEquals(blob.getMd5(), object.get("md5Hash").asText());
      assertEquals(blob.getCrc32c(), object.get("crc32c").asText());
      assertEquals(blob.getCreateTimeOffsetDateTime().toInstant(),
          Instant.parse(object.get("timeCreated").asText()));
      assertTrue(object.get("updated").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"));
      assertTrue(n.eventId().matches("\\d+"));
    } finally {
      standIn.removeListener(listener);
    }
  }

  @Test
  void doubledNotification_carriesTwoEventIdsForOneGeneration() {
    String bucket = bucket();
    standIn.notifyTwice(true);
    try {
      storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one"));
    } finally {
      standIn.notifyTwice(false);
    }
    List<ObjectFinalized> mine = standIn.notifications().stream().filter(n -> n.bucket().equals(bucket)).toList();
    assertEquals(2, mine.size());
    assertEquals(mine.get(0).generation(), mine.get(1).generation());
    assertNotEquals(mine.get(0).eventId(), mine.get(1).eventId());

    ObjectFinalized again = standIn.renotify(bucket, "doc", mine.get(0).generation());
    assertNotEquals(mine.get(1).eventId(), again.eventId());
    assertEquals(mine.get(0).objectJson(), again.objectJson());
  }

  @Test
  void wireForm_roundTrips() {
    String bucket = bucket();
    storage.create(BlobInfo.newBuilder(bucket, "doc").build(), bytes("one"));
    ObjectFinalized sent = standIn.notifications().stream().filter(n -> n.bucket().equals(bucket)).findFirst()
        .orElseThrow();

    ObjectFinalized read = ObjectFinalized.fromJson(Json.parseTrusted(sent.toJson()));

    assertEquals(sent.eventId(), read.eventId());
    assertEquals(sent.generation(), read.generation());
    assertEquals(sent.object(), read.object());
  }
}
