/// Keys and links the tests of every target share, so that a fixture is written once. None is a secret of anyone's.
public enum KeyFixtures {
    /// A Rownd key as Rownd's apps show it (base64 of 32 bytes), stored under test ids and read by PyNaCl.
    public static let rowndKey = "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno="
    /// A Rownd sign-in link, the part before `#` of the text `transfer send --rownd` shows.
    public static let rowndLink = "https://example.rownd.link/s/Ab3dE"
}
