package dev.once.local.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.WriteChannel;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import dev.once.local.node.NodeProject;
import dev.once.wire.storage.Hashes;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clients users point at the stand-in ({@code STORAGE_EMULATOR_HOST}, as dev/run prints it): Google's Java
 * client, Google's Node.js client and Google's {@code gcloud storage} CLI, each uploading simply, resumably in one
 * request and resumably in chunks, then reading metadata, downloading and listing. Every answer is checked against
 * what the stand-in stored and notified: content, hashes, generations, custom metadata.
 */
class StorageClientsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String BUCKET = "inbox";
  private static final int CHUNK = 256 * 1024;
  private static StorageStandIn standIn;

  /** One upload: how it is sent, and what it holds. */
  enum Mode { SIMPLE, RESUMABLE, CHUNKED }

  record Step(String name, Mode mode, String contentType, Map<String, String> metadata, byte[] content) {}

  /** What a client reported for one object. */
  record Seen(String name, long uploadGeneration, long generation, long size, String md5Hash, String crc32c,
      String contentType, Map<String, String> metadata, byte[] downloaded) {}

  @BeforeAll
  static void start() {
    standIn = StorageStandIn.start();
    standIn.createBucket(BUCKET); // as Terraform and dev/run do; gcloud storage cp checks the bucket exists first
  }

  @AfterAll
  static void stop() {
    standIn.close();
  }

  private static List<Step> plan(String client) {
    Random random = new Random(client.hashCode());
    byte[] large = new byte[700_000]; // three chunks of 256 KiB
    random.nextBytes(large);
    return List.of(
        new Step("clients/" + client + "/factura ñ 1.txt", Mode.SIMPLE, "text/plain",
            Map.of("source", client), "hello from ".concat(client).getBytes(StandardCharsets.UTF_8)),
        new Step("clients/" + client + "/invoice.pdf", Mode.RESUMABLE, "application/pdf", Map.of(), large),
        new Step("clients/" + client + "/chunked.bin", Mode.CHUNKED, "application/octet-stream",
            Map.of("chunks", "3"), large));
  }

  @Test
  void javaClient_uploadsSimplyAndResumably_readsMetadataDownloadsAndLists() throws Exception {
    List<Step> plan = plan("java");
    try (Storage gcs =
        StorageStandInTest.client(standIn.endpoint(), RetrySettings.newBuilder().setMaxAttempts(1).build())) {
      List<Seen> seen = new ArrayList<>();
      for (Step step : plan) {
        BlobInfo info = BlobInfo.newBuilder(BUCKET, step.name()).setContentType(step.contentType())
            .setMetadata(step.metadata().isEmpty() ? null : step.metadata()).build();
        long uploaded = switch (step.mode()) {
          case SIMPLE -> gcs.create(info, step.content()).getGeneration();
          case RESUMABLE -> {
            Path file = Files.createTempFile("upload", ".bin");
            try {
              Files.write(file, step.content());
              yield gcs.createFrom(info, file).getGeneration();
            } finally {
              Files.delete(file);
            }
          }
          case CHUNKED -> {
            WriteChannel writer = gcs.writer(info);
            writer.setChunkSize(CHUNK);
            try (writer) {
              writer.write(ByteBuffer.wrap(step.content()));
            }
            yield gcs.get(BlobId.of(BUCKET, step.name())).getGeneration();
          }
        };
        Blob blob = gcs.get(BlobId.of(BUCKET, step.name()));
        seen.add(new Seen(blob.getName(), uploaded, blob.getGeneration(), blob.getSize(), blob.getMd5(),
            blob.getCrc32c(), blob.getContentType(), blob.getMetadata() == null ? Map.of() : blob.getMetadata(),
            gcs.readAllBytes(BlobId.of(BUCKET, step.name(), blob.getGeneration()))));
      }
      Map<String, Long> listing = new TreeMap<>();
      gcs.list(BUCKET, Storage.BlobListOption.prefix("clients/java/")).iterateAll()
          .forEach(b -> listing.put(b.getName(), b.getGeneration()));
      assertMatchesTheStandIn(plan, seen, listing);
    }
  }

  @Test
  void nodeClient_withStorageEmulatorHost_uploadsSimplyAndResumably_readsMetadataDownloadsAndLists(
      @TempDir Path dir) throws Exception {
    List<Step> plan = plan("node");
    Path input = Files.createDirectories(dir.resolve("in"));
    Path output = Files.createDirectories(dir.resolve("out"));
    List<Map<String, Object>> steps = new ArrayList<>();
    for (int i = 0; i < plan.size(); i++) {
      Step step = plan.get(i);
      Files.write(input.resolve("f" + i), step.content());
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("name", step.name().substring("clients/node/".length()));
      s.put("file", "f" + i);
      s.put("resumable", step.mode() != Mode.SIMPLE);
      if (step.mode() == Mode.CHUNKED) {
        s.put("chunkSize", CHUNK);
      }
      s.put("contentType", step.contentType());
      s.put("metadata", step.metadata());
      steps.add(s);
    }
    Path planFile = dir.resolve("plan.json");
    JSON.writeValue(planFile.toFile(), steps);

    String stdout = new NodeProject(Path.of("src/test/node"), "@google-cloud/storage").run("storage-client.js",
        List.of(BUCKET, "clients/node/", input.toString(), output.toString(), planFile.toString()),
        Map.of("STORAGE_EMULATOR_HOST", standIn.endpoint()), 300);

    JsonNode report = JSON.readTree(stdout);
    List<Seen> seen = new ArrayList<>();
    for (JsonNode o : report.path("objects")) {
      Map<String, String> metadata = new TreeMap<>();
      o.path("metadata").properties().forEach(e -> metadata.put(e.getKey(), e.getValue().asText()));
      seen.add(new Seen(o.path("name").asText(), Long.parseLong(o.path("uploadGeneration").asText()),
          Long.parseLong(o.path("generation").asText()), Long.parseLong(o.path("size").asText()),
          o.path("md5Hash").asText(), o.path("crc32c").asText(), o.path("contentType").asText(), metadata,
          Files.readAllBytes(output.resolve(o.path("downloaded").asText()))));
    }
    Map<String, Long> listing = new TreeMap<>();
    report.path("listing")
        .forEach(f -> listing.put(f.path("name").asText(), Long.parseLong(f.path("generation").asText())));
    assertMatchesTheStandIn(plan, seen, listing);
  }

  /**
   * gcloud 528 (the Cloud SDK the project requires) with a fresh configuration and {@link GcloudStorage#environment}:
   * {@code cp} up (multipart below the resumable threshold, resumable above it, a stream from stdin in 256 KiB
   * chunks), {@code ls --json}, {@code cp} down, {@code cat}, and {@code --if-generation-match} on {@code cp} and
   * {@code rm}: a stale generation is refused with GCS's 412 and changes nothing, the live one is removed. Nine
   * commands, about a second each.
   */
  @Test
  void gcloudStorage_uploadsSimplyAndResumably_listsDownloadsCats_andHonoursGenerationPreconditions(@TempDir Path dir)
      throws Exception {
    List<Step> plan = plan("gcloud");
    Map<String, String> env = new LinkedHashMap<>(GcloudStorage.environment(standIn.baseUrl(), "once-test"));
    env.put("CLOUDSDK_CONFIG", dir.resolve("gcloud-config").toString()); // no account, nothing of the user's
    env.put("CLOUDSDK_STORAGE_RESUMABLE_THRESHOLD", "524288"); // the 700 kB files go resumable, the small one not
    env.put("CLOUDSDK_STORAGE_UPLOAD_CHUNK_SIZE", Integer.toString(CHUNK)); // a stream goes in chunks of this size
    GcloudStorage gcloud = new GcloudStorage(env, Duration.ofMinutes(2));
    String folder = "gs://" + BUCKET + "/clients/gcloud/";

    Map<String, Long> created = new LinkedHashMap<>();
    for (int i = 0; i < plan.size(); i++) {
      Step step = plan.get(i);
      Map<String, Long> before = standIn.counters().snapshot();
      created.put(step.name(), gcloudUpload(gcloud, step, dir.resolve("f" + i)));
      assertEquals(expectedProtocol(step.mode()), protocolDelta(before, standIn.counters().snapshot()),
          "the upload protocol gcloud used for " + step.name());
    }

    JsonNode listed = JSON.readTree(gcloud.run("ls", "--json", folder).orThrow().stdout());
    Path downloads = Files.createDirectories(dir.resolve("down"));
    gcloud.run("cp", folder + "invoice.pdf", folder + "chunked.bin", downloads + "/").orThrow();
    byte[] catted = gcloud.run("cat", "gs://" + BUCKET + "/" + plan.get(0).name()).orThrow().stdout()
        .getBytes(StandardCharsets.UTF_8);
    Map<String, byte[]> downloaded = Map.of(plan.get(0).name(), catted,
        plan.get(1).name(), Files.readAllBytes(downloads.resolve("invoice.pdf")),
        plan.get(2).name(), Files.readAllBytes(downloads.resolve("chunked.bin")));
    Map<String, Seen> byName = new HashMap<>();
    Map<String, Long> listing = new TreeMap<>();
    for (JsonNode entry : listed) {
      JsonNode o = entry.path("metadata");
      String name = o.path("name").asText();
      Map<String, String> metadata = new TreeMap<>();
      o.path("metadata").properties().forEach(e -> metadata.put(e.getKey(), e.getValue().asText()));
      long generation = Long.parseLong(o.path("generation").asText());
      listing.put(name, generation);
      byName.put(name, new Seen(name, created.getOrDefault(name, -1L), generation,
          Long.parseLong(o.path("size").asText()), o.path("md5Hash").asText(), o.path("crc32c").asText(),
          o.path("contentType").asText(), metadata, downloaded.get(name)));
    }
    List<Seen> seen = plan.stream().map(step -> byName.get(step.name())).filter(Objects::nonNull).toList();
    assertMatchesTheStandIn(plan, seen, listing);

    String pdf = folder + "invoice.pdf";
    long live = created.get(plan.get(1).name());
    GcloudStorage.Result staleCopy = gcloud.run("cp", "--if-generation-match=" + (live - 1),
        dir.resolve("f0").toString(), pdf);
    assertEquals(1, staleCopy.exitCode(), staleCopy.stderr());
    assertTrue(staleCopy.stderr().contains("HTTPError 412"), staleCopy.stderr());
    GcloudStorage.Result staleRemove = gcloud.run("rm", "--if-generation-match=" + (live - 1), pdf);
    assertEquals(1, staleRemove.exitCode(), staleRemove.stderr());
    assertTrue(staleRemove.stderr().contains("HTTPError 412"), staleRemove.stderr());
    assertEquals(1, standIn.notifications().stream().filter(n -> n.name().equals(plan.get(1).name())).count(),
        "the refused copy wrote nothing");
    try (Storage gcs =
        StorageStandInTest.client(standIn.endpoint(), RetrySettings.newBuilder().setMaxAttempts(1).build())) {
      assertEquals(live, gcs.get(BlobId.of(BUCKET, plan.get(1).name())).getGeneration(),
          "the refused rm removed nothing");
      gcloud.run("rm", "--if-generation-match=" + live, pdf).orThrow();
      assertNull(gcs.get(BlobId.of(BUCKET, plan.get(1).name())), "rm at the live generation removed it");
    }
  }

  /**
   * {@code gcloud storage cp} of one step, with its content type and custom metadata: from {@code file}, or for a
   * chunked step from stdin (gcloud streams that in chunks); the generation gcloud reports.
   */
  private static long gcloudUpload(GcloudStorage gcloud, Step step, Path file) throws IOException {
    List<String> args =
        new ArrayList<>(List.of("cp", "--print-created-message", "--content-type=" + step.contentType()));
    if (!step.metadata().isEmpty()) {
      args.add("--custom-metadata=" + String.join(",", step.metadata().entrySet().stream()
          .map(e -> e.getKey() + "=" + e.getValue()).toList()));
    }
    String url = "gs://" + BUCKET + "/" + step.name();
    byte[] stdin = null;
    if (step.mode() == Mode.CHUNKED) {
      stdin = step.content();
      args.add("-");
    } else {
      args.add(Files.write(file, step.content()).toString());
    }
    args.add(url);
    return gcloud.run(stdin, args.toArray(String[]::new)).orThrow().createdGeneration(url);
  }

  /** What the stand-in counts per protocol ({@link ObjectUploads}) for one upload of each mode. */
  private static Map<String, Long> expectedProtocol(Mode mode) {
    return switch (mode) {
      case SIMPLE -> Map.of("uploads.multipart", 1L, "uploads.resumable", 0L, "uploads.resumable.chunks", 0L);
      case RESUMABLE -> Map.of("uploads.multipart", 0L, "uploads.resumable", 1L, "uploads.resumable.chunks", 1L);
      case CHUNKED -> Map.of("uploads.multipart", 0L, "uploads.resumable", 1L, "uploads.resumable.chunks", 3L);
    };
  }

  private static Map<String, Long> protocolDelta(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> delta = new HashMap<>();
    for (String name : List.of("uploads.multipart", "uploads.resumable", "uploads.resumable.chunks")) {
      delta.put(name, after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L));
    }
    return delta;
  }

  /** Each object written once (one notification), and everything the client read back is what was written. */
  private static void assertMatchesTheStandIn(List<Step> plan, List<Seen> seen, Map<String, Long> listing)
      throws IOException {
    assertEquals(plan.size(), seen.size());
    Map<String, Long> expectedListing = new TreeMap<>();
    for (int i = 0; i < plan.size(); i++) {
      Step step = plan.get(i);
      Seen object = seen.get(i);
      List<ObjectFinalized> notified = standIn.notifications().stream()
          .filter(n -> n.name().equals(step.name())).toList();
      assertEquals(1, notified.size(), "one write of " + step.name());
      long generation = notified.get(0).generation();
      assertEquals(step.name(), object.name());
      assertEquals(generation, object.uploadGeneration(), "the upload answered the generation written: " + step.name());
      assertEquals(generation, object.generation(), "the metadata names it: " + step.name());
      assertEquals(step.content().length, object.size(), step.name());
      assertEquals(Hashes.md5(step.content()), object.md5Hash(), step.name());
      assertEquals(Hashes.crc32c(step.content()), object.crc32c(), step.name());
      assertEquals(step.contentType(), object.contentType(), step.name());
      assertEquals(step.metadata(), object.metadata(), step.name());
      assertArrayEquals(step.content(), object.downloaded(), "downloaded " + step.name());
      expectedListing.put(step.name(), generation);
    }
    assertEquals(expectedListing, listing, "the listing names every object at its generation");
  }
}
