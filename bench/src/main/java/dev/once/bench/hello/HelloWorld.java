package dev.once.bench.hello;

import com.google.cloud.functions.CloudEventsFunction;
import io.cloudevents.CloudEvent;

/**
 * The cold-start baseline: a CloudEvent function that does nothing but log the event id, packaged alone in
 * {@code once-bench-*-hello.jar}. What the invoker costs on its own, before any of the pipeline's code or clients.
 */
public final class HelloWorld implements CloudEventsFunction {
  @Override
  public void accept(CloudEvent event) {
    System.out.println("hello " + event.getId());
  }
}
