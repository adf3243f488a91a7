# Sourced by Scripts/install, Scripts/package and Scripts/bench: the release build that ships.
#
# sealkit links the Swift runtime in (--static-swift-stdlib): the binary needs Debian's own
# libraries (libsodium, libqrencode, ...) and nothing from the toolchain's folder, so it keeps
# running after the toolchain is removed, and a package made from it installs where there is no Swift.

release_flags=(-c release --static-swift-stdlib)

# The commit `sealkit --version` names: $SEALKIT_COMMIT if set (a source archive without git can
# say which one it is), else this clone's HEAD (short, "-dirty" when tracked files differ from
# it), else "unknown".
release_commit() {
  if [ -n "${SEALKIT_COMMIT:-}" ]; then
    printf '%s\n' "$SEALKIT_COMMIT"
  elif [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; then
    local commit
    commit=$(git rev-parse --short=7 HEAD)
    if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit+="-dirty"; fi
    printf '%s\n' "$commit"
  else
    printf 'unknown\n'
  fi
}

# Writes the commit into an installed sealkit: its `.sealkit_commit` section (Sources/CBuildInfo),
# 48 bytes, becomes the commit NUL-padded. The build never depends on the commit, so a new commit
# rebuilds nothing.
stamp_commit() {  # stamp_commit BINARY
  local commit field
  commit=$(release_commit)
  if [ ${#commit} -gt 40 ] || [[ "$commit" =~ [^A-Za-z0-9._+-] ]]; then
    echo "error: the commit '$commit' must be at most 40 letters, digits or ._+-" >&2
    return 64
  fi
  field=$(mktemp)
  printf '%s' "$commit" >"$field"
  truncate -s 48 "$field"
  objcopy --update-section .sealkit_commit="$field" "$1" || { rm -f "$field"; return 70; }
  rm -f "$field"
}

# Builds sealkit and argument-parser's manual generator in release, the runtime linked in, and
# prints the folder they are in. Output of the build goes to stderr.
release_build() {
  echo "==> swift build ${release_flags[*]} --product sealkit" >&2
  swift build "${release_flags[@]}" --product sealkit >&2
  echo "==> swift build ${release_flags[*]} --product generate-manual" >&2
  swift build "${release_flags[@]}" --product generate-manual >&2
  local bin
  bin=$(swift build "${release_flags[@]}" --show-bin-path)
  # The point of the exercise: nothing may come from the toolchain's folder.
  if ldd "$bin/sealkit" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime' >&2; then
    echo "error: $bin/sealkit still loads the Swift runtime (above): it would not run without the toolchain" >&2
    return 70
  fi
  printf '%s\n' "$bin"
}
