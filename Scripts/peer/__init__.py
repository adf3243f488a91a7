"""SealKit's formats written once in Python, from docs/format.md and docs/transfer.md alone (hashlib, base64,
PyNaCl), for every generator and checker of vectors and for the Python peers the Swift tests run.

It never calls sealkit or SealKit's code: it is the independent implementation those are checked against, so a
misreading of the docs here shows up as a disagreement with Swift rather than being copied into both.

  peer.keys      the fingerprint rule, libsodium's KDF, the "Keys" bundle (written and read)
  peer.codes     base64 forms, text codes with their check, parts
  peer.bundles   paper backups and share backup bundles

A script finds it with `sys.path.insert(0, <the Scripts folder>)`, from its own location, so it runs from any
working directory.
"""


class Outcome(Exception):
    """A refusal, named as the vectors name their expected outcomes ("malformed", "missing-parts", ...)."""
