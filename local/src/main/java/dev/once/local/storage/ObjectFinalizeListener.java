package dev.once.local.storage;

import dev.once.wire.storage.ObjectFinalized;

/** Receives every {@code object.finalize} notification, in write order, on the stand-in's notifier thread. */
@FunctionalInterface
public interface ObjectFinalizeListener {
  void onFinalize(ObjectFinalized notification);
}
