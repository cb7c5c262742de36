package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import io.cloudevents.CloudEvent;

/** Entry point (skeleton; the flow lands with the functions issue). */
public final class MessageDelivered implements CloudEventsFunction {
  @Override
  public void accept(CloudEvent event) {
    throw new UnsupportedOperationException("MessageDelivered is not implemented yet");
  }
}
