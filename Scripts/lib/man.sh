# Sourced by Scripts/install and Scripts/man: sealkit's man page.
#
# argument-parser's manual generator writes every command and option from their definitions, and
# an EXIT STATUS that only says 0 is success; it has no way to add sections. So its page is
# post-processed here: Scripts/lib/man-sections.mdoc (ENVIRONMENT and EXIT STATUS, sealkit's real
# variables and codes) replaces the generator's EXIT STATUS, in the place mdoc(7) gives both.

# write_man_page BIN FOLDER: FOLDER/sealkit.1 from BIN/generate-manual and BIN/sealkit.
write_man_page() {
  local bin=$1 folder=$2 sections generated
  sections="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/man-sections.mdoc"
  [ -f "$sections" ] || { echo "error: $sections is missing" >&2; return 66; }
  generated=$(mktemp -d)
  # A failed generator leaves no half-written page behind.
  if ! "$bin/generate-manual" "$bin/sealkit" --output-directory "$generated" >&2; then
    rm -rf "$generated"
    return 70
  fi
  mkdir -p "$folder"
  awk -v sections="$sections" '
    function insert(  line) {
      while ((getline line < sections) > 0) print line
      close(sections)
      inserted = 1
    }
    /^\.Sh / { skipping = 0 }
    /^\.Sh "?EXIT STATUS"?$/ && !inserted { insert(); skipping = 1; next }
    /^\.Sh "?(SEE ALSO|AUTHORS)"?$/ && !inserted { insert() }
    !skipping { print }
    END { if (!inserted) insert() }
  ' "$generated/sealkit.1" >"$generated/sealkit.1.new"
  mv "$generated/sealkit.1.new" "$folder/sealkit.1"
  rm -rf "$generated"
}
