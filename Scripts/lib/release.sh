# Sourced by Scripts/install, Scripts/package and Scripts/bench: the release build that ships.
#
# sealkit links the Swift runtime in (--static-swift-stdlib): the binary needs Debian's own
# libraries (libsodium, libqrencode, ...) and nothing from the toolchain's folder, so it keeps
# running after the toolchain is removed, and a package made from it installs where there is no Swift.

release_flags=(-c release --static-swift-stdlib)

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
