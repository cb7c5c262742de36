package dev.once.local.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
import dev.once.wire.storage.ObjectResource;
import java.time.Instant;

/**
 * The JSON API bucket resource the stand-in answers bucket calls with, as GCS writes it (its object resource is
 * once-wire's {@link ObjectResource}: events carry that one, never this).
 */
final class BucketResource {
  private BucketResource() {}

  static ObjectNode toJson(String name, Instant created, String baseUrl) {
    ObjectNode node = Json.object();
    node.put("kind", "storage#bucket");
    node.put("id", name);
    node.put("selfLink", baseUrl + "/storage/v1/b/" + name);
    node.put("projectNumber", "0");
    node.put("name", name);
    node.put("timeCreated", ObjectResource.time(created));
    node.put("updated", ObjectResource.time(created));
    node.put("metageneration", "1");
    node.put("location", "US");
    node.put("locationType", "multi-region");
    node.put("storageClass", "STANDARD");
    node.put("etag", "CAE=");
    node.putObject("versioning").put("enabled", true);
    return node;
  }
}
