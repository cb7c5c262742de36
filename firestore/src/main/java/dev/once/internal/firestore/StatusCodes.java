package dev.once.internal.firestore;

import com.google.api.gax.rpc.ApiException;
import com.google.cloud.firestore.FirestoreException;

/** Reads the gRPC status code out of whatever the Firestore client threw, however deeply wrapped. */
final class StatusCodes {
  private StatusCodes() {}

  static boolean is(Throwable error, String code) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api && api.getStatusCode().getCode().name().equals(code)) {
        return true;
      }
      if (t instanceof FirestoreException firestore
          && firestore.getStatus() != null
          && firestore.getStatus().getCode().name().equals(code)) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }
}
