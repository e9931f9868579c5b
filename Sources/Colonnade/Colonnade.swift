#if canImport(Glibc)
import Glibc  // also links libm, which Int(exactly: Double) and friends need on Linux
#endif

/// Colonnade: an in-memory columnar analytics engine for daily stock quotes.
public enum Colonnade {
    /// The version of the library and the `colonnade` tool.
    public static let version = "0.1.0"
}
