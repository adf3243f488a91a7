#!/usr/bin/env python3
# Python: it tests Scripts/check-api, a Python script, by running it on scratch copies of its JSON baseline.
"""Scripts/check-api fails where an app would break: run on scratch copies of api/1.0.0.json, it fails on
a removed enum case, on a case added to a closed enum, on a removed value of `SealKitError.Reason`, on a changed
declaration; it passes an added reason (a static value of an open struct) and a new enum with its cases. Run by
Scripts/test (`python3 -m unittest discover -s Scripts/lib -p 'test_*.py'`); needs no build.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CHECK = os.path.join(ROOT, "Scripts", "check-api")
with open(os.path.join(ROOT, "api", "1.0.0.json")) as file:
    BASELINE = json.load(file)


def entry(name, kind, declaration):
    return {"name": name, "kind": kind, "declaration": declaration}


class CheckAPITests(unittest.TestCase):
    def run_check(self, baseline, current, classified=(), users=None):
        """Runs the check; `classified` adds lines to a scratch copy of api/secrets.txt (the list of
        every public type, each classed as holding secrets or not); `users` is the folder where each symbol's user is looked for (none: not looked for)."""
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            for name, api in (("baseline.json", baseline), ("current.json", current)):
                paths.append(os.path.join(folder, name))
                with open(paths[-1], "w") as file:
                    json.dump(api, file)
            secrets = os.path.join(folder, "secrets.txt")
            # The repository's list, kept to the types of `current`: the list follows the API as it is now, and
            # `current` here is the 1.0 baseline with the test's changes, without the types added since.
            types = {symbol["name"] for symbols in current.values() for symbol in symbols
                     if symbol["kind"] in ("struct", "class", "enum", "actor", "protocol", "typealias")}
            with open(os.path.join(ROOT, "api", "secrets.txt")) as original, open(secrets, "w") as file:
                kept = [line for line in original if line.startswith("#") or not line.strip() or line.split()[1] in types]
                file.write("".join(kept) + "".join(line + "\n" for line in classified))
            result = subprocess.run([sys.executable, CHECK, "--baseline", paths[0], "--current", paths[1],
                                     "--secrets", secrets] + (["--users", users] if users else []),
                                    capture_output=True, text=True, timeout=60)
        return result.returncode, result.stderr

    @staticmethod
    def without(api, name):
        changed = copy.deepcopy(api)
        for product in changed:
            changed[product] = [symbol for symbol in changed[product] if symbol["name"] != name]
        return changed

    @staticmethod
    def adding(api, *symbols, product="SealKit"):
        changed = copy.deepcopy(api)
        changed[product] += list(symbols)
        return changed

    def test_the_baseline_holds_enum_cases_and_reasons_by_client_names(self):
        names = {(symbol["name"], symbol["kind"]) for symbol in BASELINE["SealKit"]}
        self.assertIn(("CiphertextFormat", "enum"), names)
        self.assertIn(("CiphertextFormat.v2", "enum.case"), names)
        self.assertIn(("SealKitError.Reason", "struct"), names)
        self.assertIn(("SealKitError.Reason.wrongPlace", "type.property"), names)
        self.assertNotIn(("SealKitError.Reason.noUser", "type.property"), names)
        # Names a client writes: no internal module (SealCore, SealKeystore, ...) anywhere in a name.
        for symbols in BASELINE.values():
            for symbol in symbols:
                self.assertFalse(symbol["name"].startswith("Seal") and symbol["name"].split(".")[0] in
                                 {"SealCore", "SealKeystore", "SealProfile", "SealJSON", "SealTransfer", "SealMailbox",
                                  "SealBackup", "SealQR", "SealScan", "SealAudit", "SealSecretService"}, symbol)
                self.assertNotIn("precise", symbol)

    def test_the_same_api_passes(self):
        status, output = self.run_check(BASELINE, BASELINE)
        self.assertEqual(status, 0, output)

    def test_a_removed_case_fails(self):
        status, output = self.run_check(BASELINE, self.without(BASELINE, "CiphertextFormat.v2"))
        self.assertEqual(status, 1, output)
        self.assertIn("check-api: SealKit.CiphertextFormat.v2 is gone: case v2", output)

    def test_a_case_added_to_a_closed_enum_fails(self):
        status, output = self.run_check(self.without(BASELINE, "CiphertextFormat.v2"), BASELINE)
        self.assertEqual(status, 1, output)
        self.assertIn("check-api: SealKit.CiphertextFormat.v2 added to the closed enum CiphertextFormat", output)

    def test_a_case_added_to_an_enum_of_another_product_fails(self):
        status, output = self.run_check(
            BASELINE, self.adding(BASELINE, entry("QRErrorCorrection.extreme", "enum.case", "case extreme"),
                                  product="SealKitQR"))
        self.assertEqual(status, 1, output)
        self.assertIn("SealKitQR.QRErrorCorrection.extreme added to the closed enum QRErrorCorrection", output)

    def test_a_removed_reason_fails(self):
        status, output = self.run_check(BASELINE, self.without(BASELINE, "SealKitError.Reason.wrongPlace"))
        self.assertEqual(status, 1, output)
        self.assertIn("check-api: SealKit.SealKitError.Reason.wrongPlace is gone", output)

    def test_an_added_reason_is_an_addition(self):
        reason = entry("SealKitError.Reason.quotaExceeded", "type.property",
                       "static let quotaExceeded: SealKitError.Reason")
        status, output = self.run_check(BASELINE, self.adding(BASELINE, reason))
        self.assertEqual(status, 0, output)
        self.assertIn("check-api: note: SealKit.SealKitError.Reason.quotaExceeded added", output)

    def test_a_new_enum_with_its_cases_is_an_addition(self):
        status, output = self.run_check(BASELINE, self.adding(
            BASELINE, entry("Weather", "enum", "enum Weather"), entry("Weather.rain", "enum.case", "case rain")),
            classified=["free    Weather    a test type"])
        self.assertEqual(status, 0, output)

    def test_a_new_public_type_must_say_whether_it_holds_a_secret(self):
        status, output = self.run_check(BASELINE, self.adding(BASELINE, entry("Weather", "enum", "enum Weather")))
        self.assertEqual(status, 1, output)
        self.assertIn("Weather is a public type missing from api/secrets.txt", output)

    def test_a_changed_declaration_fails_once_as_a_change(self):
        changed = copy.deepcopy(BASELINE)
        target = next(s for s in changed["SealKit"] if s["name"] == "SealKitError.Reason")
        target["declaration"] = target["declaration"].replace("struct Reason", "enum Reason")
        status, output = self.run_check(BASELINE, changed)
        self.assertEqual(status, 1, output)
        self.assertIn("check-api: SealKit.SealKitError.Reason changed: struct Reason", output)
        self.assertNotIn("SealKitError.Reason is gone", output)

    def test_every_symbol_has_a_user_in_examples_snippets_or_articles(self):
        status, output = self.run_check(BASELINE, BASELINE, users=ROOT)
        self.assertEqual(status, 0, output)

    def test_a_symbol_no_app_code_names_fails_until_a_snippet_uses_it(self):
        added = self.adding(BASELINE, entry("Vault.frobnicate(strictly:)", "method", "func frobnicate(strictly: Bool)"))
        status, output = self.run_check(BASELINE, added, users=ROOT)
        self.assertEqual(status, 1, output)
        self.assertIn("check-api: Vault.frobnicate(strictly:) is public but named nowhere in Examples/", output)
        with tempfile.TemporaryDirectory() as folder:
            for name in ("Examples", "Sources"):
                os.symlink(os.path.join(ROOT, name), os.path.join(folder, name))
            shutil.copytree(os.path.join(ROOT, "Snippets"), os.path.join(folder, "Snippets"))
            with open(os.path.join(folder, "Snippets", "Frobnicating.swift"), "w") as file:
                file.write("try vault.frobnicate(strictly: true)\n")
            status, output = self.run_check(BASELINE, added, users=folder)
        self.assertEqual(status, 0, output)


if __name__ == "__main__":
    unittest.main()
