package dev.once.pipeline;

import com.google.cloud.ReadChannel;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Reads a document at the generation its event names — not the live object, which may have been overwritten
 * since — and never more than the size limit, whatever the event claimed.
 */
public final class DocumentReader {
  /**
   * A paid call's lease covers its timeout plus this: reading the document before the call (the lease is checked, and
   * renewed if need be, right before it).
   */
  public static final Duration PAID_LEASE_MARGIN = Duration.ofSeconds(5);

  /** The generation is gone (deleted, or never existed): no later delivery can read it either. */
  public static final class Gone extends Exception {
    private static final long serialVersionUID = 1L;

    public Gone(String message) {
      super(message);
    }
  }

  /** The object is larger than the limit, although its event said otherwise. */
  public static final class TooLarge extends Exception {
    private static final long serialVersionUID = 1L;

    TooLarge(String message) {
      super(message);
    }
  }

  private final Storage storage;

  public DocumentReader(Storage storage) {
    this.storage = storage;
  }

  public byte[] read(DocumentSource source, long maxBytes) throws Gone, TooLarge {
    BlobId id = BlobId.of(source.bucket(), source.name(), source.generation());
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(Math.max(source.size(), 0), maxBytes) + 1);
    try (ReadChannel reader = storage.reader(id)) {
      reader.limit(maxBytes + 1);
      ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
      while (reader.read(buffer) >= 0) {
        buffer.flip();
        out.write(buffer.array(), 0, buffer.limit());
        buffer.clear();
        if (out.size() > maxBytes) {
          throw new TooLarge("the object is larger than the limit of " + maxBytes + " bytes");
        }
      }
    } catch (StorageException e) {
      if (e.getCode() == 404) {
        throw new Gone("generation " + source.generation() + " of the object no longer exists");
      }
      throw e;
    } catch (IOException e) {
      if (e.getCause() instanceof StorageException storageError && storageError.getCode() == 404) {
        throw new Gone("generation " + source.generation() + " of the object no longer exists");
      }
      throw new UncheckedIOException("reading generation " + source.generation() + " of the object failed", e);
    }
    return out.toByteArray();
  }
}
