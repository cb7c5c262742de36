package dev.once.config;

import java.util.function.Supplier;

/** A value built on first use, once, however many requests ask for it at the same time (a client, say). */
public final class Lazy<T> implements Supplier<T> {
  private final Supplier<T> factory;
  private volatile T value;

  private Lazy(Supplier<T> factory) {
    this.factory = factory;
  }

  public static <T> Lazy<T> of(Supplier<T> factory) {
    return new Lazy<>(factory);
  }

  @Override
  public T get() {
    T current = value;
    if (current == null) {
      synchronized (this) {
        current = value;
        if (current == null) {
          current = factory.get();
          value = current;
        }
      }
    }
    return current;
  }

  /** Whether the value was built already (a cold-start check in tests). */
  public boolean isBuilt() {
    return value != null;
  }
}
