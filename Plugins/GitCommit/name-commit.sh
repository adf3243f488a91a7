#!/bin/sh
# Names the commit a build of sealkit comes from, for `sealkit --version` and SARIF's
# `tool.driver.version`, and writes it as Swift for the CLI to compile:
#   name-commit.sh ROOT OUTPUT.swift
# The GitCommit plugin runs it whenever git moves HEAD or the package's sources change. The commit is
#   $SEALKIT_COMMIT when the build is told one (a source archive without git can say which it is);
#   else ROOT's HEAD, short, "-dirty" when tracked files differ from it or a file under Sources is untracked;
#   else "unknown" (no git, or ROOT is not a checkout's top: a source archive unpacked inside another
#   repository must not name that repository's commit).
# OUTPUT is rewritten only when the commit changed, so an unchanged commit recompiles nothing.
set -eu
root=$1 output=$2

if [ -n "${SEALKIT_COMMIT:-}" ]; then
  commit=$SEALKIT_COMMIT
  # It becomes a Swift string literal and a Debian package's file name: a short, plain word only.
  case $commit in
    *[!A-Za-z0-9._+-]*) too_odd=1 ;;
    *) too_odd= ;;
  esac
  if [ -n "$too_odd" ] || [ ${#commit} -gt 40 ]; then
    echo "error: SEALKIT_COMMIT must be at most 40 letters, digits or ._+- (it names the commit sealkit is built from)" >&2
    exit 1
  fi
elif [ -e "$root/.git" ] && command -v git >/dev/null 2>&1 \
  && commit=$(git -C "$root" rev-parse --short=7 HEAD 2>/dev/null); then
  # --no-optional-locks: asking must not rewrite git's index, an input of this very command.
  # Untracked files count where SwiftPM compiles them in (a new source file), not elsewhere (notes, logs).
  if [ -n "$(git -C "$root" --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null)" ] \
    || [ -n "$(git -C "$root" --no-optional-locks status --porcelain --untracked-files=all -- Sources Package.swift 2>/dev/null)" ]; then
    commit="$commit-dirty"
  fi
else
  commit=unknown
fi

text="// Written by Plugins/GitCommit/name-commit.sh for each build: do not edit.
let generatedCommit = \"$commit\""
if [ "$(cat "$output" 2>/dev/null)" != "$text" ]; then
  written=$(stat -c %Y "$output" 2>/dev/null || echo 0)
  mkdir -p "$(dirname "$output")"
  printf '%s\n' "$text" >"$output.tmp"
  mv "$output.tmp" "$output"
  # The Swift driver on Linux keeps a file's modification time in whole seconds, and skips a file whose
  # time matches the one it compiled: a commit made within the second of the last build would go
  # unnoticed. So the new file's time must be in a later second than the old one's: set, not waited for,
  # as an old time ahead of the clock (a build folder from another machine, a clock set back) would never come.
  # (A few seconds on, at most: a file system that keeps times in two-second steps rounds one second down.)
  later=$((written + 1))
  while [ "$(stat -c %Y "$output")" -le "$written" ] && [ "$later" -le $((written + 4)) ]; do
    touch -d "@$later" "$output"
    later=$((later + 1))
  done
fi
