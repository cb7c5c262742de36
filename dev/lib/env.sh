# Shared by the dev/ scripts: find a JDK >= 21 and the Cloud SDK emulators, or say clearly what is missing.
# Sourced, not executed.

die() { echo "error: $*" >&2; exit 1; }

# Prints the major version of the java at $1/bin/java, or nothing.
java_major() {
  [ -x "$1/bin/java" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

# JAVA_HOME if it is >= 21, else the newest JDK >= 21 under /usr/lib/jvm (a JDK: it must have javac).
find_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    local v; v=$(java_major "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge 21 ]; then echo "$JAVA_HOME"; return 0; fi
  fi
  local best="" best_v=0 d v
  for d in /usr/lib/jvm/*; do
    [ -d "$d" ] && [ ! -L "$d" ] && [ -x "$d/bin/javac" ] || continue
    v=$(java_major "$d")
    if [ -n "$v" ] && [ "$v" -ge 21 ] && [ "$v" -gt "$best_v" ]; then best="$d"; best_v="$v"; fi
  done
  [ -n "$best" ] && echo "$best"
}

use_jdk() {
  local jdk; jdk=$(find_jdk)
  [ -n "$jdk" ] || die "no JDK 21 or newer found: set JAVA_HOME to one, or install one under /usr/lib/jvm (JAVA_HOME=${JAVA_HOME:-unset})"
  export JAVA_HOME="$jdk"
  export PATH="$JAVA_HOME/bin:$PATH"
}

# The Cloud SDK root: CLOUDSDK_ROOT, else the one gcloud on PATH belongs to, else /usr/lib/google-cloud-sdk.
find_cloud_sdk() {
  if [ -n "${CLOUDSDK_ROOT:-}" ]; then echo "$CLOUDSDK_ROOT"; return 0; fi
  local g; g=$(command -v gcloud 2>/dev/null) || g=""
  if [ -n "$g" ]; then
    local root; root=$(cd "$(dirname "$(readlink -f "$g")")/.." && pwd)
    if [ -d "$root/platform" ]; then echo "$root"; return 0; fi
  fi
  echo /usr/lib/google-cloud-sdk
}

use_cloud_sdk() {
  local sdk; sdk=$(find_cloud_sdk)
  [ -f "$sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar" ] ||
    die "the Cloud SDK Firestore emulator is missing under $sdk (install the Cloud SDK with 'cloud-firestore-emulator', or set CLOUDSDK_ROOT)"
  ls "$sdk"/platform/pubsub-emulator/lib/*.jar >/dev/null 2>&1 ||
    die "the Cloud SDK Pub/Sub emulator is missing under $sdk (install the Cloud SDK with 'pubsub-emulator', or set CLOUDSDK_ROOT)"
  export CLOUDSDK_ROOT="$sdk"
}

use_maven() {
  command -v mvn >/dev/null 2>&1 || die "Apache Maven (mvn) is not on PATH"
}
