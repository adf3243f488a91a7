import PackagePlugin

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Names the commit of the checkout being built, so `sealkit --version` and SARIF's
/// `tool.driver.version` say which source a plain `swift build` made: the short HEAD, `-dirty` when
/// tracked files differ from it, as Scripts/lib/release.sh names it for an installed binary. Without
/// git, or outside a git checkout (a source archive), the commit is `unknown`.
///
/// A prebuild command: `/bin/sh` asks git (about 30 ms) and rewrites the generated file only when the
/// commit changed, so an unchanged commit rebuilds nothing. SwiftPM runs it when it (re)plans the
/// build (a changed manifest, files added or removed, a `swift package` command), not on every
/// incremental build: until then a binary names the commit of the last plan, `-dirty` if the tree was.
@main
struct GitCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GitCommit")
        let script = #"""
            root=$1 out=$2
            commit=unknown
            if command -v git >/dev/null 2>&1 && [ -e "$root/.git" ]; then
              if found=$(git -C "$root" rev-parse --short=7 HEAD 2>/dev/null); then
                commit=$found
                if [ -n "$(git -C "$root" --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                  commit="$commit-dirty"
                fi
              fi
            fi
            case $commit in *[!A-Za-z0-9._+-]*) commit=unknown ;; esac
            text="// Written by the GitCommit plugin (Plugins/GitCommit) before each build.
            let generatedCommit = \"$commit\""
            mkdir -p "$out"
            if [ "$(cat "$out/GeneratedCommit.swift" 2>/dev/null)" != "$text" ]; then
              printf '%s\n' "$text" >"$out/GeneratedCommit.swift"
            fi
            """#
        return [
            .prebuildCommand(
                displayName: "Naming the git commit of \(context.package.displayName)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
