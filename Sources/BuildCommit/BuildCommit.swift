/// The commit of the checkout this binary was built from (Plugins/GitCommit): the short HEAD,
/// `-dirty` when tracked files differed from it, or `unknown` without git or outside a checkout.
public func sourceCommit() -> String { generatedCommit }
