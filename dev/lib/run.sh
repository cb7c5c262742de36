# Shared by dev/run, dev/demo and dev/once: build the run module (and the functions it starts) when a source
# changed, and find a dev/run that is already running here. Sourced after env.sh, from the repository root.

RUN_STAMP=run/target/.built
RUN_LOCK=target/run/run.lock

# The pid of the dev/run running with the default log directory, or nothing.
running_pid() {
  [ -f "$RUN_LOCK" ] || return 0
  local pid
  pid=$(sed -n 's/^ *"pid" *: *\([0-9][0-9]*\).*/\1/p' "$RUN_LOCK" | head -n 1)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

# Builds once-run and the functions' deploy jar and invoker (mvn -pl run -am package) unless nothing under
# pom.xml, wire/, local/, core/, firestore/, functions/ or run/ changed since the last build: then it costs one find.
build_run() {
  if [ -f "$RUN_STAMP" ] && [ -f run/target/classpath.txt ] && [ -f functions/target/invoker/java-function-invoker.jar ] &&
     ls functions/target/once-functions-*-deploy.jar >/dev/null 2>&1 &&
     [ -z "$(find pom.xml wire local core firestore functions run -path '*/target' -prune -o -type f -newer "$RUN_STAMP" -print 2>/dev/null | head -n 1)" ]; then
    return 0
  fi
  mkdir -p target
  echo "building the functions and the local runner (mvn -pl run -am package -DskipTests; log: target/run-build.log) ..." >&2
  if ! mvn -B -ntp -pl run -am package -DskipTests >target/run-build.log 2>&1; then
    tail -n 40 target/run-build.log >&2
    die "the build failed; the whole log is target/run-build.log"
  fi
  touch "$RUN_STAMP"
}

# JVM flags that silence notices about libraries (protobuf's sun.misc.Unsafe, Netty's native loading, SLF4J
# without a provider) on the JDKs that print them; JDK 21 knows neither flag and prints neither notice.
quiet_jvm_flags() {
  local v; v=$(java_major "$JAVA_HOME")
  echo "-Dslf4j.internal.verbosity=ERROR"
  if [ -n "$v" ] && [ "$v" -ge 24 ]; then echo "--sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED"; fi
}

# The classpath of the run module's mains.
run_classpath() {
  echo "run/target/classes:$(cat run/target/classpath.txt)"
}
